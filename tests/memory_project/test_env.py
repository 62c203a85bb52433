import pytest
from django.core.exceptions import ImproperlyConfigured

from memory_project.env import env_float, env_fraction, env_int


def test_env_int_unset_or_empty_is_the_default(monkeypatch):
    monkeypatch.delenv("TEST_ENV_NUMBER", raising=False)
    assert env_int("TEST_ENV_NUMBER", 4) == 4
    monkeypatch.setenv("TEST_ENV_NUMBER", "")
    assert env_int("TEST_ENV_NUMBER", 4) == 4


def test_env_int_reads_the_value_within_its_range(monkeypatch):
    monkeypatch.setenv("TEST_ENV_NUMBER", "7")
    assert env_int("TEST_ENV_NUMBER", 4, minimum=1, maximum=7) == 7


def test_env_int_refuses_a_float(monkeypatch):
    monkeypatch.setenv("TEST_ENV_NUMBER", "1.5")
    with pytest.raises(ImproperlyConfigured, match=r"^TEST_ENV_NUMBER='1.5' is not an integer$"):
        env_int("TEST_ENV_NUMBER", 4)


def test_env_float_refuses_a_word(monkeypatch):
    monkeypatch.setenv("TEST_ENV_NUMBER", "abc")
    with pytest.raises(ImproperlyConfigured, match=r"^TEST_ENV_NUMBER='abc' is not a number$"):
        env_float("TEST_ENV_NUMBER", 0.5)


def test_env_float_below_the_minimum(monkeypatch):
    monkeypatch.setenv("TEST_ENV_NUMBER", "-0.5")
    with pytest.raises(ImproperlyConfigured, match=r"^TEST_ENV_NUMBER=-0.5 is below the minimum 0$"):
        env_float("TEST_ENV_NUMBER", 0.5, minimum=0)


def test_env_int_above_the_maximum(monkeypatch):
    monkeypatch.setenv("TEST_ENV_NUMBER", "11")
    with pytest.raises(ImproperlyConfigured, match=r"^TEST_ENV_NUMBER=11 is above the maximum 10$"):
        env_int("TEST_ENV_NUMBER", 4, maximum=10)


def test_env_fraction_reads_a_share(monkeypatch):
    monkeypatch.setenv("TEST_ENV_NUMBER", "0.25")
    assert env_fraction("TEST_ENV_NUMBER", 0.5) == 0.25


def test_env_fraction_above_one(monkeypatch):
    monkeypatch.setenv("TEST_ENV_NUMBER", "1.5")
    with pytest.raises(ImproperlyConfigured, match=r"^TEST_ENV_NUMBER=1.5 is above the maximum 1$"):
        env_fraction("TEST_ENV_NUMBER", 0.5)
