import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from memories.models import Memory
from memories.services.api_keys import api_key_create
from memories.services.embeddings import embedding_get
from memory_project.text import cjk_ngrams, content_hash
from sessions.models import ChatSession, ConversationTurn


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.com")
    password = factory.django.Password("pw-for-tests")


def api_key_for(user) -> str:
    """A fresh raw API key for `user`."""
    _, raw = api_key_create(username=user.username)
    return raw


class ChatSessionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ChatSession

    owner = factory.SubFactory(UserFactory)
    agent = ""
    channel = "api"


class ConversationTurnFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ConversationTurn

    session = factory.SubFactory(ChatSessionFactory)
    owner = factory.LazyAttribute(lambda o: o.session.owner)
    sequence = factory.Sequence(lambda n: n + 1)
    role = "user"
    content = factory.Sequence(lambda n: f"turn number {n}")
    embedding = factory.LazyAttribute(lambda o: embedding_get(owner=o.owner, text=o.content))
    search_ngrams = factory.LazyAttribute(lambda o: cjk_ngrams(o.content))
    created_at = factory.LazyFunction(timezone.now)


class MemoryFactory(factory.django.DjangoModelFactory):
    """A memory row written directly (no history, no merge decision): for setting up a scene."""

    class Meta:
        model = Memory

    owner = factory.SubFactory(UserFactory)
    content = factory.Sequence(lambda n: f"memory number {n}")
    content_hash = factory.LazyAttribute(lambda o: content_hash(o.content))
    category = "fact"
    importance = 0.6
    strength = 0.6
    base_strength = factory.LazyAttribute(lambda o: o.strength)
    embedding = factory.LazyAttribute(lambda o: embedding_get(owner=o.owner, text=o.content))
    search_ngrams = factory.LazyAttribute(lambda o: cjk_ngrams(o.content))
    observed_at = factory.LazyFunction(timezone.now)
    last_reinforced_at = factory.LazyAttribute(lambda o: o.observed_at)
