"""The dashboard's Evaluate page: the eval command's report for the owner, from an uploaded file."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.dashboard.conftest import logged_in
from tests.factories import MemoryFactory


def _upload(lines) -> SimpleUploadedFile:
    body = "\n".join(json.dumps(line) for line in lines).encode()
    return SimpleUploadedFile("questions.jsonl", body, content_type="application/jsonl")


def _cells(html: str, table_id: str) -> list[list[str]]:
    body = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0].split("<tbody>", 1)[1]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in body.split("</tr>") if "<td" in row]


def test_an_uploaded_questions_file_is_evaluated_on_the_owners_data(alice):
    # given alice's memories, a question that is one's own text (answer first) and one that is another
    # memory's text, its answer sharing four of its words (second): R@1 1/2, R@2 1, MRR (1 + 1/2) / 2
    nurse = "Works as a nurse at the hospital in Porto"
    MemoryFactory(owner=alice, content="Miso the grey cat sleeps on the sofa")
    adopted = MemoryFactory(owner=alice, content="Miso the grey cat was adopted in May")
    MemoryFactory(owner=alice, content=nurse)
    questions = [
        {"question": nurse, "memories": [nurse]},
        {"question": "Miso the grey cat sleeps on the sofa", "memories": [str(adopted.pk)]},
    ]

    # when she uploads it on the Evaluate page with cut-offs 1 and 2
    page = logged_in(alice).post("/evaluate/", {"questions": _upload(questions), "ks": "1,2"})

    # then each system ranks the first answer first and the second second
    assert page.status_code == 200
    html = page.content.decode()
    systems = _cells(html, "eval-systems")
    assert [row[0] for row in systems] == ["service", "bm25", "dense"]
    assert [row[1:4] for row in systems] == [["0.500", "1.000", "0.750"]] * 3
    assert _cells(html, "eval-questions") == [
        [nurse, "1", "1", "1"],
        ["Miso the grey cat sleeps on the sofa", "2", "2", "2"],
    ]


def test_a_bad_file_is_a_400_naming_the_line(alice):
    # when alice uploads a file whose second line names no memory of hers
    lines = [{"question": "x", "memories": ["nothing like this"]}]
    page = logged_in(alice).post("/evaluate/", {"questions": _upload([{"question": "y", "turns": []}, *lines])})

    # then the page says what is wrong, and shows no report
    assert page.status_code == 400
    html = page.content.decode()
    assert "questions.jsonl: line 1: &quot;memories&quot; and/or &quot;turns&quot; must list" in html
    assert 'id="eval-report"' not in html


def test_the_page_is_in_the_navigation(alice):
    page = logged_in(alice).get("/evaluate/")
    assert page.status_code == 200
    assert 'data-nav="eval"' in page.content.decode()


UNSEARCHABLE = "the question may not hold NUL bytes or lone surrogates"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            json.dumps({"question": "\ud800", "memories": ["x"]}),
            "line 2: the question may not hold NUL bytes or lone surrogates",
        ),
        (
            json.dumps({"question": "a\x00b", "memories": ["x"]}),
            "line 2: the question may not hold NUL bytes or lone surrogates",
        ),
        ("1" * 5000, "line 2: not JSON (a number of more than 4300 digits)"),
        ("[" * 100_000, "line 2: not JSON (nested too deeply)"),
    ],
)
def test_a_line_that_cannot_be_searched_is_a_400_naming_it(alice, line, problem):
    # given a file whose first line is good and whose second cannot be read or searched
    MemoryFactory(owner=alice, content="x")
    body = json.dumps({"question": "y", "memories": ["x"]}) + "\n" + line
    upload = SimpleUploadedFile("questions.jsonl", body.encode(), content_type="application/jsonl")

    # when alice uploads it
    page = logged_in(alice).post("/evaluate/", {"questions": upload})

    # then the page says what is wrong with which line, and shows no report
    assert page.status_code == 400
    html = page.content.decode()
    assert f"questions.jsonl: {problem}" in html
    assert 'id="eval-report"' not in html
