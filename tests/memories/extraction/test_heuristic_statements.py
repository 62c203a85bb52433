"""Single statements through the heuristic extractor: what each kind of sentence becomes."""

import pytest

from memories.extraction.heuristic import extract_candidates
from tests.memories.extraction.builders import brief, turn, user_says


def one(line: str):
    candidates = extract_candidates(user_says(line), [])
    assert len(candidates) == 1, candidates
    return candidates[0]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("I prefer tea.", ("User prefers tea", "preference", 0.6, "drink preference", "prefers", "tea")),
        ("I now prefer coffee.", ("User prefers coffee", "preference", 0.6, "drink preference", "prefers", "coffee")),
        (
            "My favorite color is blue.",
            ("User's favorite color is blue", "preference", 0.6, "favorite color", "is", "blue"),
        ),
        (
            "Blue is my favorite color.",
            ("User's favorite color is blue", "preference", 0.6, "favorite color", "is", "blue"),
        ),
        ("I love hiking.", ("User loves hiking", "preference", 0.6, "hiking", "opinion", "likes")),
        (
            "I really don't like spicy food.",
            ("User doesn't like spicy food", "preference", 0.6, "spicy food", "opinion", "dislikes"),
        ),
        ("I use Vim for everything.", ("User uses Vim for everything", "preference", 0.6, "editor", "uses", "Vim")),
        ("I'm a nurse.", ("User is a nurse", "fact", 0.8, "occupation", "is", "nurse")),
        ("I live in Berlin.", ("User lives in Berlin", "fact", 0.8, "residence", "lives in", "Berlin")),
        ("My name is Sam.", ("User's name is Sam", "fact", 0.8, "name", "is", "Sam")),
        ("My wife's name is Anna.", ("User's wife's name is Anna", "fact", 0.8, "wife's name", "is", "Anna")),
        (
            "I have a dog named Rex.",
            ("User has a dog named Rex", "fact", 0.6, "dog named rex", "has", "a dog named Rex"),
        ),
        ("I'm allergic to peanuts.", ("User is allergic to peanuts", "fact", 0.8, "peanuts allergy", "is", "allergic")),
        (
            "Let's go with FastAPI.",
            ("User decided to go with FastAPI", "decision", 0.7, "web framework", "decided", "FastAPI"),
        ),
        (
            "I usually check my email first thing in the morning.",
            (
                "User usually checks their email first thing in the morning",
                "workflow",
                0.6,
                "check their email first thing in the morning",
                "habit",
                "usually",
            ),
        ),
        (
            "To deploy, run make deploy from the repo root.",
            (
                "To deploy, run make deploy from the repo root",
                "skill",
                0.6,
                "deploy",
                "how to",
                "run make deploy from the repo root",
            ),
        ),
        ("我喜欢喝绿茶。", ("用户喜欢喝绿茶", "preference", 0.6, "绿茶", "opinion", "likes")),
        ("我现在更喜欢喝咖啡。", ("用户现在更喜欢喝咖啡", "preference", 0.6, "drink preference", "prefers", "咖啡")),
        ("我不喜欢香菜。", ("用户不喜欢香菜", "preference", 0.6, "香菜", "opinion", "dislikes")),
        ("我最喜欢的颜色是蓝色。", ("用户最喜欢的颜色是蓝色", "preference", 0.6, "favorite color", "is", "蓝色")),
        ("我在字节跳动工作。", ("用户在字节跳动工作", "fact", 0.8, "employer", "works at", "字节跳动")),
        ("我的邮箱是 lei@example.com", ("用户的邮箱是 lei@example.com", "fact", 0.8, "email", "is", "lei@example.com")),
        (
            "我每天早上查看股票行情。",
            ("用户每天早上查看股票行情", "workflow", 0.6, "查看股票行情", "habit", "每天早上"),
        ),
        ("我们用 Django 吧", ("用户决定使用 Django", "decision", 0.7, "web framework", "decided", "Django")),
        (
            "I have type 1 diabetes, so I check my blood sugar a lot.",
            ("User has type 1 diabetes", "fact", 0.8, "type 1 diabetes condition", "has", "yes"),
        ),
        (
            "I was diagnosed with asthma.",
            ("User was diagnosed with asthma", "fact", 0.8, "asthma condition", "has", "yes"),
        ),
        ("I'm left-handed.", ("User is left-handed", "fact", 0.8, "left-handed condition", "is", "yes")),
        (
            "I'm colorblind — red-green, specifically.",
            ("User is colorblind", "fact", 0.8, "colorblind condition", "is", "yes"),
        ),
        (
            "Reminder: I am lactose intolerant.",
            ("User is lactose intolerant", "fact", 0.8, "diet", "is", "lactose intolerant"),
        ),
        (
            "Just a reminder, my blood type is O negative.",
            ("User's blood type is O negative", "fact", 0.6, "blood type", "is", "O negative"),
        ),
        (
            "Reminder: call the dentist on Friday.",
            (
                "User has a todo: call the dentist on Friday (2026-03-13)",
                "todo",
                0.6,
                "call the dentist",
                "due",
                "2026-03-13",
            ),
        ),
    ],
)
def test_a_statement_becomes_one_candidate_in_the_third_person(line, expected):
    # given a user turn with one statement
    # when extracted
    candidate = one(line)

    # then it is phrased about the user, with its category, importance and slot
    assert brief(candidate) == expected


def test_a_new_preference_fills_the_same_slot_with_another_value():
    # given "I prefer tea" in one session and "I now prefer coffee" in a later one
    before = one("I prefer tea.")
    after = one("I now prefer coffee.")

    # then both name the same subject and predicate, so the engine can supersede the first
    assert (before.subject, before.predicate) == (after.subject, after.predicate) == ("drink preference", "prefers")
    assert (before.value, after.value) == ("tea", "coffee")


def test_english_and_chinese_statements_share_slots():
    # given the same facts in two languages
    pairs = [
        ("I prefer tea.", "我现在更喜欢喝咖啡。"),
        ("I live in Berlin.", "我住在北京。"),
        ("My name is Sam.", "我叫小明。"),
    ]

    # when each is extracted
    # then the slot is the same and only the value differs
    for english, chinese in pairs:
        en, zh = one(english), one(chinese)
        assert (en.subject, en.predicate) == (zh.subject, zh.predicate)
        assert en.value != zh.value


def test_a_later_statement_in_the_same_slot_replaces_the_earlier_one_within_a_conversation():
    # given a preference that changes during the conversation
    turns = user_says("I prefer tea.", "Hmm, actually I now prefer coffee.")

    # when extracted
    candidates = extract_candidates(turns, [])

    # then only the final preference is proposed, from the turn that said it
    assert [(c.content, c.value, c.source_sequences) for c in candidates] == [("User prefers coffee", "coffee", [2])]


def test_the_same_statement_twice_is_one_candidate_with_both_turns():
    # given a fact repeated later
    turns = user_says("I live in Berlin.", "Like I said, I live in Berlin.")

    # when extracted
    candidates = extract_candidates(turns, [])

    # then it is proposed once, citing both turns
    assert [(c.content, c.source_sequences) for c in candidates] == [("User lives in Berlin", [1, 2])]


@pytest.mark.parametrize(
    ("line", "content", "value"),
    [
        ("Always answer in English.", "User wants the assistant to always answer in English", "always"),
        ("Never use tabs for indentation.", "User wants the assistant to never use tabs for indentation", "never"),
        ("Don't ever commit directly to main.", "User wants the assistant to never commit directly to main", "never"),
        ("From now on, reply in Chinese.", "User wants the assistant to reply in Chinese", "must"),
        ("Next time, don't use var in JavaScript.", "User wants the assistant to never use var in JavaScript", "never"),
        ("不要用 tabs 缩进。", "用户要求不要用 tabs 缩进", "never"),
        ("永远不要在周五部署。", "用户要求永远不要在周五部署", "never"),
        ("必须写单元测试", "用户要求必须写单元测试", "must"),
        ("以后回答都用中文", "用户要求以后回答都用中文", "must"),
    ],
)
def test_rules_are_permanent_and_high_importance(line, content, value):
    # given an instruction the user wants kept
    # when extracted
    candidate = one(line)

    # then it is a permanent, important rule
    assert (candidate.content, candidate.category, candidate.retention) == (content, "rule", "permanent")
    assert (candidate.importance, candidate.predicate, candidate.value) == (0.8, "rule", value)
    assert candidate.expires_at is None


def test_a_habit_in_the_first_person_is_not_a_rule():
    # given "I always …" (about the user, not an instruction)
    candidate = one("I always drink tea in the morning.")

    # then it is a workflow
    assert (candidate.content, candidate.category, candidate.value) == (
        "User always drinks tea in the morning",
        "workflow",
        "always",
    )


@pytest.mark.parametrize(
    ("line", "content", "category", "subject"),
    [
        (
            "Please remember that my sister's birthday is May 3.",
            "User's sister's birthday is May 3",
            "fact",
            "sister's birthday",
        ),
        ("Remember: the staging server is 10.0.0.5", "The staging server is 10.0.0.5", "fact", "staging server"),
        (
            "Can you remember that I'm allergic to shellfish?",
            "User is allergic to shellfish",
            "fact",
            "shellfish allergy",
        ),
        ("Remember to use type hints.", "User wants the assistant to use type hints", "rule", "use type hints"),
        ("记住，我的生日是5月3日。", "用户的生日是5月3日", "fact", "birthday"),
        ("记住：服务器地址是 10.0.0.5", "服务器地址是 10.0.0.5", "fact", "服务器地址"),
    ],
)
def test_remember_requests_are_explicit_high_and_permanent(line, content, category, subject):
    # given "remember …" / "记住…"
    # when extracted
    candidate = one(line)

    # then the statement is stored as the user asked, above inferred memories
    assert (candidate.content, candidate.category, candidate.subject) == (content, category, subject)
    assert (candidate.explicit, candidate.importance, candidate.retention, candidate.action) == (
        True,
        0.9,
        "permanent",
        "remember",
    )


@pytest.mark.parametrize(
    ("line", "content", "subject", "predicate"),
    [
        ("Forget that I like jazz.", "User likes jazz", "jazz", "opinion"),
        ("Please forget my old address.", "User's old address", "", ""),
        ("Delete my phone number from your memory.", "User's phone number", "", ""),
        ("忘掉我喜欢爵士乐这件事", "用户喜欢爵士乐", "爵士乐", "opinion"),
        ("忘记我住在杭州", "用户住在杭州", "residence", "lives in"),
    ],
)
def test_forget_requests_name_what_to_forget(line, content, subject, predicate):
    # given "forget …" / "忘掉…" / "忘记…"
    # when extracted
    candidate = one(line)

    # then the candidate is a forget action whose content is what to look for
    assert (candidate.action, candidate.explicit) == ("forget", True)
    assert (candidate.content, candidate.subject, candidate.predicate) == (content, subject, predicate)


def test_forgetting_something_said_earlier_drops_it_from_the_same_batch():
    # given a statement and, later in the conversation, a request to forget it
    turns = user_says("I like jazz.", "Actually, forget that I like jazz.")

    # when extracted
    candidates = extract_candidates(turns, [])

    # then only the forget request is left
    assert [(c.action, c.content, c.source_sequences) for c in candidates] == [("forget", "User likes jazz", [2])]


@pytest.mark.parametrize(
    ("line", "content", "category"),
    [
        ("No, actually I live in Munich.", "User lives in Munich", "fact"),
        ("No, use pnpm not npm.", "User wants the assistant to use pnpm not npm", "rule"),
        ("That's wrong, the API prefix is /api/v2.", "The API prefix is /api/v2", "fact"),
        ("不对，我住在北京。", "用户住在北京", "fact"),
    ],
)
def test_corrections_are_confident(line, content, category):
    # given a correction of something the assistant said or assumed
    # when extracted
    candidate = one(line)

    # then the corrected statement is extracted with high confidence and a raised importance
    assert (candidate.content, candidate.category, candidate.confidence) == (content, category, 0.95)
    assert candidate.importance in (0.7, 0.9)


@pytest.mark.parametrize(
    "line",
    [
        "Hi there!",
        "Thanks, that's great.",
        "ok",
        "What's the weather like tomorrow?",
        "Can you help me write a Python script?",
        "Do you always answer so fast?",
        "Please write a function that parses dates.",
        "I need to convert this CSV to JSON.",
        "I think that could work.",
        "I don't know.",
        "I like it!",
        "I love that idea.",
        "I like how you explained that.",
        "I'm tired.",
        "I have a question about Django.",
        "My laptop is broken.",
        "I'll try that.",
        "I went to Paris last week.",
        "I forgot my password.",
        "Forget it.",
        "Never mind.",
        "Don't worry about it.",
        "Is it possible to use Redis here?",
        "你好！",
        "谢谢你",
        "今天天气怎么样？",
        "我觉得还行",
        "我今天有点累",
        "我有个问题",
        "你能帮我写个脚本吗",
    ],
)
def test_small_talk_questions_and_requests_yield_nothing(line):
    # given a turn with no durable information about the user
    # when extracted
    # then nothing is proposed
    assert extract_candidates(user_says(line), []) == []


@pytest.mark.parametrize("turns", [[], [turn(1, "user", "")], [turn(1, "user", "ok")], [turn(1, "user", "I am")]])
def test_empty_or_very_short_conversations_yield_nothing(turns):
    # given nothing, or almost nothing, said (seed 002 §7.2 "空对话 / 极短对话")
    # when extracted
    # then the result is an empty list
    assert extract_candidates(turns, []) == []


def test_existing_memories_are_not_extracted_again():
    # given memories already known, in the wording the extractor produces (punctuation and case aside)
    existing = ["User prefers green tea.", "user lives in berlin", "- 用户每天早上查看股票行情。"]
    turns = user_says("I prefer green tea.", "I live in Berlin.", "我每天早上查看股票行情。", "I work at Acme.")

    # when extracted against them (seed 002 §7.2 "已有记忆去重")
    candidates = extract_candidates(turns, existing)

    # then only what is new comes back
    assert [c.content for c in candidates] == ["User works at Acme"]


def test_a_changed_value_is_extracted_even_though_the_slot_is_known():
    # given an existing preference
    existing = ["User prefers green tea"]

    # when the user states a different one
    candidates = extract_candidates(user_says("I now prefer coffee."), existing)

    # then the new value is proposed (the engine supersedes the old one)
    assert [c.content for c in candidates] == ["User prefers coffee"]


def test_a_forget_request_is_kept_even_when_its_text_is_an_existing_memory():
    # given the memory the user wants gone
    existing = ["User likes jazz"]

    # when they ask to forget it
    candidates = extract_candidates(user_says("Forget that I like jazz."), existing)

    # then the forget action survives the verbatim filter
    assert [(c.action, c.content) for c in candidates] == [("forget", "User likes jazz")]


@pytest.mark.parametrize(
    ("line", "content"),
    [
        ("Our wedding anniversary is on June 14th.", "User's wedding anniversary is on June 14th (2026-06-14)"),
        ("Our dog's name is Biscuit.", "User's dog's name is Biscuit"),
        ("Our API is built with Django.", "User's team's API is built with Django"),
    ],
)
def test_what_our_names_is_the_households_or_the_teams(line, content):
    # when "our …" is said of what a couple or family has together, or of anything else
    # then it is the user's own, or their team's
    assert one(line).content == content


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # chat leaves 我 out
        ("住海淀，五道口附近。", ("用户住海淀，五道口附近", "residence", "海淀，五道口")),
        ("每天开车上班，单程四十分钟。", ("用户每天开车上班，单程四十分钟", "开车上班，单程四十分钟", "每天")),
        # a remark after the statement
        ("我是初中语文老师，今年带初三，压力山大。", ("用户是初中语文老师", "occupation", "初中语文老师")),
        # 的 left out before an attribute everyone has
        (
            "我手机号是13800138000，快递填这个就行。",
            ("用户的手机号是13800138000，快递填这个就行", "phone number", "13800138000，快递填这个就行"),
        ),
        # a city with nothing after it: where the user is based
        ("我在杭州，最近梅雨季天天下雨烦死了。", ("用户在杭州", "residence", "杭州")),
        ("人在深圳，南山科技园这边上班。", ("用户人在深圳", "residence", "深圳")),
    ],
)
def test_chinese_said_as_people_chat_is_read(line, expected):
    # when a Chinese statement is said the way chat says it
    candidate = one(line)

    # then it is read as the statement it is
    assert (candidate.content, candidate.subject, candidate.value) == expected


@pytest.mark.parametrize(
    "line", ["帮我查一下天气。", "在吗？", "我在杭州出差。", "我在开会。", "最近天气好热。", "每周三都打，雷打不动。"]
)
def test_chinese_requests_and_moments_are_not_read_as_statements_about_the_user(line):
    # when a request, a greeting or a moment is said without a subject
    # then nothing is kept
    assert extract_candidates(user_says(line), []) == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # a habit whose verb has no object, with a remark after it
        (
            "I run every morning before work, usually out the door by 6.",
            ("User runs every morning before work", "run", "every morning"),
        ),
        # how often, said as a rate
        (
            "I go to the gym three times a week.",
            ("User goes to the gym three times a week", "go to the gym", "three times a week"),
        ),
        (
            "I smoke about half a pack a day, trying to cut down but it's hard.",
            ("User smokes about half a pack a day", "smoke about half a pack", "a day"),
        ),
    ],
)
def test_english_habits_said_as_people_chat_are_read(line, expected):
    # when a habit is said with how often, and perhaps a remark after it
    candidate = one(line)

    # then it is kept as a habit
    assert (candidate.content, candidate.subject, candidate.value) == expected


@pytest.mark.parametrize(
    "line",
    [
        "I took a day off.",
        "I'm fine, thanks.",
        "Hi, how are you?",
        "I get them like twice a month.",  # what is got was said before
    ],
)
def test_a_rate_or_a_remark_alone_is_not_a_habit(line):
    # when nothing about the user's habits is said
    # then nothing is kept
    assert extract_candidates(user_says(line), []) == []


def test_a_habit_whose_place_was_said_before_is_not_kept_beside_the_statement_that_said_it():
    # when the user says where, then how often without it
    candidates = extract_candidates(
        user_says("I've got a membership at Anytime Fitness and I go like four times a week."), []
    )

    # then only the membership is kept: "goes like four times a week" says nothing on its own
    assert [c.content for c in candidates] == ["User has got a membership at Anytime Fitness"]


def test_something_started_with_how_often_is_what_happened_not_a_habit():
    # when the user says they started something, with how often they do it
    candidate = one("I just started volunteering at a local dog shelter once a month.")

    # then it is the event of starting it, as important as any
    assert (candidate.content, candidate.category, candidate.importance, candidate.predicate) == (
        "User started volunteering at a local dog shelter once a month",
        "fact",
        0.8,
        "event",
    )
