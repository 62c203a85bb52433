"""What the sessions app tells the apps built on it, sent inside the transaction that stored it.

The live events (turn.created, session.ended) go out through memory_project.events as well; these
carry the rows, once per batch, so a receiver (the extraction pipeline in memories) queues its work
in the same transaction without this app importing it.
"""

from django.dispatch import Signal

# session: the ChatSession, locked; turns: the ConversationTurns just stored, in order.
turns_stored = Signal()
# session: the ChatSession just ended; job: its session-end ExtractionJob, created with the end.
session_ended = Signal()
