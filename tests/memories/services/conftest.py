from tests.fixtures import fast_password_hasher

__all__ = ["fast_password_hasher"]
