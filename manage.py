#!/usr/bin/env python
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings")
    # Imported here, as in Django's own manage.py: nothing of the project loads before the settings
    # module is named.
    from memory_project.cli import cli_environment

    # Before the settings are read: a command's stdout is its result, its logs stay quiet.
    cli_environment(sys.argv)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
