from tests.fixtures import attached, fast_password_hasher

__all__ = ["attached", "fast_password_hasher"]
