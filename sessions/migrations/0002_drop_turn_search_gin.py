"""Turns are searched through memories' postings (memories 0005); the GIN index had no other reader."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("chat_sessions", "0001_initial"), ("memories", "0005_search_postings")]

    operations = [migrations.RemoveIndex(model_name="conversationturn", name="turn_search_gin")]
