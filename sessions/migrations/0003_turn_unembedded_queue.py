"""Turns are stored first and embedded after (sessions.services.turn_embeddings): the waiting ones, indexed."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('chat_sessions', '0002_drop_turn_search_gin'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='conversationturn',
            index=models.Index(condition=models.Q(('embedding__isnull', True)), fields=['received_at'], name='turn_unembedded'),
        ),
    ]
