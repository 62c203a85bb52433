from django.utils import timezone
from rest_framework import authentication, exceptions

from memories.models import ApiKey
from memories.selectors.api_keys import api_key_get_active
from memories.services.api_keys import api_key_hash
from memory_project.throttling import auth_failure_record, auth_failure_wait


class ApiKeyAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>`; keys are looked up by their SHA-256 digest.

    A client address that presented too many wrong keys (API_AUTH_FAILURE_RATE) gets 429 until its
    window ends, before any lookup: keys cannot be guessed at speed.
    """

    def authenticate(self, request):
        auth = authentication.get_authorization_header(request).split()
        if not auth or auth[0].lower() != self.keyword.lower().encode():
            return None
        wait = auth_failure_wait(request)
        if wait is not None:
            raise exceptions.Throttled(wait=wait, detail="Too many failed authentication attempts.")
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            auth_failure_record(request)
            raise

    def authenticate_credentials(self, key):
        api_key = api_key_get_active(key_hash=api_key_hash(key))
        if api_key is None:
            raise exceptions.AuthenticationFailed("Invalid API key.")
        if not api_key.owner.is_active:
            raise exceptions.AuthenticationFailed("This key's owner is inactive.")
        # Touch at most once a minute so authentication stays a read on the hot path.
        now = timezone.now()
        if api_key.last_used_at is None or (now - api_key.last_used_at).total_seconds() > 60:
            ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        return api_key.owner, api_key
