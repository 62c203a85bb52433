from tests.fixtures import attached

__all__ = ["attached"]
