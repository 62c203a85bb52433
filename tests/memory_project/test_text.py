"""What PostgreSQL text can hold: the checks the API's fields and the request statistics share."""

import pytest

from memory_project.text import has_surrogate, storable


@pytest.mark.parametrize(
    "text,surrogate,can_store",
    [
        ("plain", False, True),
        ("", False, True),
        ("emoji 😀 and 中文", False, True),
        ("a\x00b", False, False),
        ("lone \ud800", True, False),
        ("lone \udfff end", True, False),
        ("edge \ud7ff \ue000", False, True),
    ],
)
def test_surrogates_and_nul_bytes_are_what_postgresql_text_cannot_hold(text, surrogate, can_store):
    assert has_surrogate(text) is surrogate
    assert storable(text) is can_store
