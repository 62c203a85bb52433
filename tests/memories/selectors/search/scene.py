"""The owner searched by the tests of memories.selectors.search: memories and turns sharing words."""

from tests.factories import ChatSessionFactory, ConversationTurnFactory, MemoryFactory, UserFactory


def pottery_owner():
    """Carol: three memories (two about a pottery studio) and a two-turn session about it."""
    owner = UserFactory(username="carol")
    MemoryFactory(owner=owner, content="Takes pottery classes on Thursdays", category="skill")
    MemoryFactory(owner=owner, content="Pottery studio is on Elm street", category="fact")
    MemoryFactory(owner=owner, content="Drinks espresso without sugar", category="preference")
    session = ChatSessionFactory(owner=owner)
    ConversationTurnFactory(session=session, sequence=1, content="Where is the pottery studio again?")
    ConversationTurnFactory(session=session, sequence=2, content="On Elm street, next to the bakery")
    return owner
