"""First person → "User …", and the slot keys the engine compares."""

import pytest

from memories.extraction.phrasing import conjugate, slot_key, split_clauses, split_sentences, third_person


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("I like tea", "User likes tea"),
        ("I really like tea", "User likes tea"),
        ("I usually go to bed late", "User usually goes to bed late"),
        ("I need to call my mom", "User needs to call their mom"),
        ("I study Japanese with my friends", "User studies Japanese with their friends"),
        ("I watch movies when I can't sleep", "User watches movies when they can't sleep"),
        ("I'm a nurse", "User is a nurse"),
        ("I am not a fan of jazz", "User is not a fan of jazz"),
        ("I've got two cats", "User has got two cats"),
        ("I'll be in Tokyo next week.", "User will be in Tokyo next week"),
        ("I don't eat meat", "User doesn't eat meat"),
        ("I can swim", "User can swim"),
        ("I moved to Berlin", "User moved to Berlin"),
        ("My sister lives with me", "User's sister lives with them"),
        ("We use Django for our backend", "User's team uses Django for their backend"),
        # "our" is the household's for what a couple or family has together, else the team's
        ("Our wedding anniversary is on June 14th", "User's wedding anniversary is on June 14th"),
        ("Our kids go to Lincoln Elementary", "User's kids go to Lincoln Elementary"),
        ("Our new flat has two bedrooms", "User's new flat has two bedrooms"),
        ("Our sprint ends on Friday", "User's team's sprint ends on Friday"),
    ],
)
def test_first_person_clauses_become_statements_about_the_user(clause, expected):
    assert third_person(clause) == expected


@pytest.mark.parametrize(
    ("verb", "third"),
    [("like", "likes"), ("watch", "watches"), ("go", "goes"), ("study", "studies"), ("play", "plays")]
    + [("have", "has"), ("need", "needs"), ("can", "can"), ("moved", "moved"), ("went", "went")],
)
def test_conjugation(verb, third):
    assert conjugate(verb) == third


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Drink Preference", "drink preference"),
        ("  the   favorite  color. ", "favorite color"),
        ("my editor", "editor"),
        ("User's residence", "residence"),
        ("一个记忆系统项目", "记忆系统项目"),
        ("「记忆库」", "记忆库"),
    ],
)
def test_slot_keys_are_lower_case_without_articles_or_punctuation(text, key):
    assert slot_key(text) == key


def test_sentences_split_on_western_and_chinese_punctuation_and_lines():
    text = "I like tea. Do you?\n- I live in Berlin!我住在北京。你呢？"

    assert split_sentences(text) == ["I like tea.", "Do you?", "I live in Berlin!", "我住在北京。", "你呢？"]


def test_a_decimal_or_a_domain_does_not_end_a_sentence():
    assert split_sentences("I run Python 3.12 on example.com daily.") == ["I run Python 3.12 on example.com daily."]


@pytest.mark.parametrize(
    ("sentence", "clauses"),
    [
        ("I love tea, but I hate coffee and I'm a nurse", ["I love tea", "I hate coffee", "I'm a nurse"]),
        ("I like tea and coffee", ["I like tea and coffee"]),
        ("我喜欢喝茶，但我不喜欢咖啡", ["我喜欢喝茶", "我不喜欢咖啡"]),
        ("我住在杭州，平时喜欢喝绿茶", ["我住在杭州", "我平时喜欢喝绿茶"]),
        ("比起茶，我更喜欢咖啡", ["比起茶，我更喜欢咖啡"]),
    ],
)
def test_clauses_split_where_a_new_first_person_statement_starts(sentence, clauses):
    assert split_clauses(sentence) == clauses
