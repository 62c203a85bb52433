from tests.fixtures import dispatched, fast_password_hasher, staff_api, staff_user

__all__ = ["dispatched", "fast_password_hasher", "staff_api", "staff_user"]
