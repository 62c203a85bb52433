from tests.fixtures import dispatched, fast_password_hasher, staff_api, staff_user
from tests.memories.services.transfer.conftest import seed_memory_json, seed_memory_md

__all__ = [
    "dispatched",
    "fast_password_hasher",
    "seed_memory_json",
    "seed_memory_md",
    "staff_api",
    "staff_user",
]
