"""The subcommands of `manage.py memory`, a module per group, mixed into its Command."""
