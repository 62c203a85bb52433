"""A model's reply that Python's JSON parser refuses is invalid output (a repair is asked for), never a
crash of the extraction that asked."""

import pytest

from memories.providers.openai_schemas import ExtractionReply, InvalidOutput, reply_parse


@pytest.mark.parametrize(
    "raw,reason",
    [
        ('{"memories": [{"content": "x", "importance": ' + "9" * 5000 + "}]}", "(ValueError)"),
        ("[" * 100_000 + "]" * 100_000, "(RecursionError)"),
        ('{"memories": [', "(Expecting value at line 1 column 15)"),
    ],
    ids=["an integer of 5,000 digits", "nesting 100,000 deep", "cut short"],
)
def test_a_reply_the_json_parser_refuses_is_invalid_output(raw, reason):
    with pytest.raises(InvalidOutput) as refused:
        reply_parse(raw, ExtractionReply)

    assert str(refused.value).startswith("the reply is not valid JSON ")
    assert str(refused.value).endswith(reason)
