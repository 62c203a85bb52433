"""Issue 12, finding 6: wrong API keys and wrong dashboard passwords are slowed, honest use is not."""

import pytest
from django.test import Client

from memories.models import Memory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_client_guessing_api_keys_is_throttled_before_any_lookup(settings, api):
    settings.API_AUTH_FAILURE_RATE = "20/min"
    guesser = Client()

    codes = [guesser.get("/api/v1/memories/", HTTP_AUTHORIZATION=f"Token wrong-key-{n}").status_code for n in range(30)]

    assert codes == [401] * 20 + [429] * 10
    refused = guesser.get("/api/v1/memories/", HTTP_AUTHORIZATION="Token wrong-key-x")
    assert refused.json()["error"]["code"] == "throttled"
    assert int(refused["Retry-After"]) >= 1
    # and even a valid key from that address waits out the window (keys cannot be guessed at speed)
    from tests.factories import api_key_for

    valid = Client().get("/api/v1/memories/", HTTP_AUTHORIZATION=f"Token {api_key_for(UserFactory(username='z'))}")
    assert valid.status_code == 429


def test_honest_heavy_use_of_one_key_is_not_throttled_by_default(api):
    codes = {api.get("/api/v1/metrics/").status_code for _ in range(150)}

    assert codes == {200}


def test_a_key_over_its_rate_gets_429_and_others_keep_going(settings, api, other_api):
    settings.API_KEY_THROTTLE_RATE = "5/min"

    codes = [api.post("/api/v1/memories/", {"content": f"fact {n}"}, format="json").status_code for n in range(7)]

    assert codes == [201] * 5 + [429] * 2
    assert Memory.objects.count() == 5
    assert other_api.get("/api/v1/memories/").status_code == 200


def test_throttle_enabled_off_lifts_the_limits(settings, api):
    settings.THROTTLE_ENABLED = False
    settings.API_KEY_THROTTLE_RATE = "1/min"
    settings.API_AUTH_FAILURE_RATE = "1/min"

    assert {api.get("/api/v1/metrics/").status_code for _ in range(5)} == {200}
    guesses = {Client().get("/", HTTP_AUTHORIZATION="Token nope").status_code for _ in range(3)}
    assert 429 not in guesses


def test_wrong_dashboard_passwords_lock_the_login_out(settings):
    # given a superuser, and the default limit of 10 failures
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    root.set_password("right-password")
    root.save()
    browser = Client()

    # when someone tries wrong passwords
    codes = [
        browser.post("/accounts/login/", {"username": "root", "password": f"guess-{n}"}).status_code for n in range(12)
    ]

    # then nine are refused as wrong, the tenth failure locks the login, the right password included
    assert codes[:9] == [200] * 9
    assert codes[9:] == [429, 429, 429]
    locked = browser.post("/accounts/login/", {"username": "root", "password": "right-password"})
    assert locked.status_code == 429
    assert b"Too many login attempts" in locked.content
    assert "_auth_user_id" not in browser.session
    # and the admin login shares the lockout
    assert browser.post("/admin/login/", {"username": "root", "password": "right-password"}).status_code == 429


def test_a_locked_out_user_can_still_log_in_from_another_address(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.AXES_FAILURE_LIMIT = 3
    user = UserFactory(username="hana")
    user.set_password("pw-hana-123")
    user.save()
    for n in range(3):
        Client(REMOTE_ADDR="203.0.113.9").post("/accounts/login/", {"username": "hana", "password": f"x{n}"})

    elsewhere = Client(REMOTE_ADDR="198.51.100.7")
    response = elsewhere.post("/accounts/login/", {"username": "hana", "password": "pw-hana-123"})

    assert response.status_code == 302
