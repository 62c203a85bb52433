"""Procedural memory from tool failures (seed 004 §4.5): a failure followed by its fix is a lesson."""

from memories.extraction.heuristic import extract_candidates
from tests.memories.extraction.builders import turn


def test_a_failure_then_a_fix_that_worked_becomes_an_error_lesson():
    # given a tool failure, the assistant's change of approach, and a successful call
    turns = [
        turn(1, "user", "Can you summarize the article at https://example.com/app?"),
        turn(2, "assistant", "Sure, let me fetch it."),
        turn(3, "tool", "", tool_name="fetch_url", tool_error="EmptyContent: page body is empty (JavaScript-rendered)"),
        turn(4, "assistant", "The page is a React single-page app, so I'll use the browser tool instead."),
        turn(5, "tool", "<html>Article text …</html>", tool_name="browser"),
        turn(6, "assistant", "Here is the summary."),
    ]

    # when extracted
    candidates = extract_candidates(turns, [])

    # then one procedural lesson names the tool, the error and the fix, citing the three turns
    assert len(candidates) == 1
    lesson = candidates[0]
    assert lesson.content == (
        'When fetch_url fails with "EmptyContent: page body is empty (JavaScript-rendered)", '
        "use the browser tool instead"
    )
    assert (lesson.category, lesson.importance, lesson.retention, lesson.confidence) == ("error", 0.8, "long", 0.8)
    assert (lesson.predicate, lesson.value) == ("workaround", "use the browser tool instead")
    assert lesson.subject == "fetch_url emptycontent: page body is empty (javascript-rendered"
    assert lesson.source_sequences == [3, 4, 5]
    assert lesson.entities == [("fetch_url", "tool"), ("browser", "tool")]


def test_an_error_in_a_tool_turns_content_counts_as_a_failure():
    # given a tool turn whose output is an error (no tool_error field), then a user's fix in Chinese
    turns = [
        turn(1, "user", "请帮我在服务器上运行部署脚本"),
        turn(2, "tool", "bash: syntax error near unexpected token `('", tool_name="terminal"),
        turn(3, "user", "我用的是 Windows，改用 PowerShell 执行"),
        turn(4, "tool", "部署完成", tool_name="terminal"),
    ]

    # when extracted
    lessons = [c for c in extract_candidates(turns, []) if c.category == "error"]

    # then the lesson is written in Chinese, like the fix
    assert [(c.content, c.source_sequences) for c in lessons] == [
        ("当 terminal 报错「bash: syntax error near unexpected token `('」时，改用 PowerShell 执行", [2, 3, 4])
    ]


def test_a_silent_switch_to_another_tool_that_works_is_the_fix():
    # given a failure and a successful call of another tool, with nothing said in between
    turns = [
        turn(1, "tool", "", tool_name="web_search", tool_error="429 Too Many Requests"),
        turn(2, "tool", "results …", tool_name="bing_search"),
    ]

    # when extracted
    candidates = extract_candidates(turns, [])

    # then the switch is the lesson
    assert [c.content for c in candidates] == [
        'When web_search fails with "429 Too Many Requests", use bing_search instead'
    ]


def test_the_same_failure_twice_without_a_fix_is_recorded_as_a_known_failure():
    # given a tool failing twice the same way and nothing that fixed it
    turns = [
        turn(1, "user", "Run the nightly report query."),
        turn(2, "tool", "Error: connection refused", tool_name="db_query"),
        turn(3, "tool", "Error: connection refused", tool_name="db_query"),
        turn(4, "assistant", "The database seems to be down."),
    ]

    # when extracted
    candidates = extract_candidates(turns, [])

    # then one medium-importance error memory records it
    assert [(c.content, c.category, c.importance, c.source_sequences) for c in candidates] == [
        ('db_query failed 2 times with "Error: connection refused"', "error", 0.6, [2, 3])
    ]


def test_a_single_failure_without_a_fix_teaches_nothing():
    # given one failure and the assistant giving up
    turns = [
        turn(1, "tool", "", tool_name="fetch_url", tool_error="403 Forbidden"),
        turn(2, "assistant", "Sorry, I can't access that page."),
    ]

    # then nothing is extracted
    assert extract_candidates(turns, []) == []


def test_successful_tool_calls_teach_nothing():
    # given tool calls that worked
    turns = [
        turn(1, "user", "What's in the repo?"),
        turn(2, "tool", "README.md setup.py src/", tool_name="ls"),
        turn(3, "assistant", "It has a README, a setup.py and a src folder."),
    ]

    # then nothing is extracted
    assert extract_candidates(turns, []) == []
