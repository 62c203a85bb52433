import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    """The embedding cache is scoped by owner (issue 12): the old rows, keyed without an owner, are
    dropped (it is a cache; vectors are recomputed on the next write)."""

    dependencies = [
        ("memories", "0006_corememory_plural"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunSQL("TRUNCATE memories_embeddingcache", reverse_sql=migrations.RunSQL.noop),
        migrations.AddField(
            model_name="embeddingcache",
            name="owner",
            field=models.ForeignKey(
                default=None,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
            preserve_default=False,
        ),
    ]
