"""Small vocabularies behind the heuristic subject guesses.

A domain is what makes two statements about different things share a slot: "I prefer tea" and
"我现在更喜欢喝咖啡" are both about the user's "drink preference", so the second can supersede the
first. The lists are deliberately short and common; anything missing simply gets no shared slot.
"""

import re

# term (lower case) -> domain. Multi-word terms win over their parts ("chinese food" is food).
_DOMAINS: dict[str, tuple[str, ...]] = {
    "drink": (
        "tea",
        "green tea",
        "black tea",
        "herbal tea",
        "iced tea",
        "bubble tea",
        "coffee",
        "espresso",
        "latte",
        "cappuccino",
        "americano",
        "matcha",
        "water",
        "sparkling water",
        "juice",
        "orange juice",
        "beer",
        "wine",
        "red wine",
        "white wine",
        "soda",
        "coke",
        "milk",
        "hot chocolate",
        "茶",
        "绿茶",
        "红茶",
        "乌龙茶",
        "奶茶",
        "咖啡",
        "拿铁",
        "美式",
        "可乐",
        "果汁",
        "啤酒",
        "红酒",
        "白酒",
        "牛奶",
        "豆浆",
    ),
    "food": (
        "pizza",
        "sushi",
        "pasta",
        "burgers",
        "burger",
        "salad",
        "ramen",
        "noodles",
        "rice",
        "dumplings",
        "steak",
        "tacos",
        "curry",
        "chinese food",
        "italian food",
        "thai food",
        "indian food",
        "mexican food",
        "japanese food",
        "spicy food",
        "火锅",
        "面条",
        "米饭",
        "饺子",
        "寿司",
        "披萨",
        "川菜",
        "粤菜",
        "湘菜",
        "辣的",
    ),
    "programming language": (
        "python",
        "javascript",
        "typescript",
        "java",
        "golang",
        "rust",
        "c++",
        "c#",
        "ruby",
        "php",
        "kotlin",
        "swift",
        "scala",
        "haskell",
        "elixir",
        "clojure",
        "lua",
        "perl",
    ),
    "editor": (
        "vim",
        "neovim",
        "emacs",
        "vs code",
        "vscode",
        "visual studio code",
        "sublime text",
        "intellij",
        "pycharm",
        "webstorm",
        "helix",
        "nano",
        "zed",
    ),
    "operating system": ("linux", "windows", "macos", "mac", "ubuntu", "debian", "fedora", "arch linux"),
    "database": (
        "postgresql",
        "postgres",
        "mysql",
        "mariadb",
        "sqlite",
        "mongodb",
        "sql server",
        "oracle",
        "dynamodb",
        "cassandra",
        "clickhouse",
    ),
    "web framework": (
        "django",
        "flask",
        "fastapi",
        "rails",
        "ruby on rails",
        "express.js",
        "spring boot",
        "laravel",
        "next.js",
        "nextjs",
        "nuxt",
    ),
    "frontend framework": ("react", "vue", "angular", "svelte"),
    "test framework": ("pytest", "unittest", "jest", "mocha", "vitest", "rspec"),
    "package manager": ("npm", "yarn", "pnpm", "pip", "poetry", "uv", "conda", "cargo"),
    "shell": ("bash", "zsh", "fish shell", "powershell"),
    "browser": ("chrome", "firefox", "safari", "microsoft edge", "brave"),
    "cloud provider": ("aws", "gcp", "google cloud", "azure", "阿里云", "腾讯云"),
    "indentation": ("tabs", "spaces", "tab", "空格"),
    "theme": ("dark mode", "light mode", "dark theme", "light theme", "深色模式", "浅色模式", "暗色模式"),
    "language": (
        "english",
        "chinese",
        "mandarin",
        "cantonese",
        "spanish",
        "french",
        "german",
        "japanese",
        "korean",
        "中文",
        "英文",
        "英语",
        "汉语",
        "日语",
    ),
    "time of day": ("morning", "mornings", "evening", "evenings", "night", "nights", "afternoon", "afternoons"),
    "color": ("red", "blue", "green", "yellow", "purple", "orange", "black", "white", "pink", "grey", "gray"),
    "music": (
        "jazz",
        "rock",
        "pop music",
        "classical music",
        "hip hop",
        "heavy metal",
        "blues",
        "country music",
        "爵士乐",
        "摇滚",
    ),
    "pet": ("dogs", "cats", "dog", "cat"),
}

# Domains whose members are software the memory graph should know as tools.
TOOL_DOMAINS = {
    "programming language",
    "editor",
    "operating system",
    "database",
    "web framework",
    "frontend framework",
    "test framework",
    "package manager",
    "shell",
    "browser",
    "cloud provider",
}

# Chinese verbs in front of an object say what kind of thing it is ("喝咖啡" is a drink).
ZH_VERB_DOMAINS = {"喝": "drink", "吃": "food", "听": "music", "用": "", "看": "", "玩": ""}

# Chinese attribute names in "我最喜欢的X是Y" / "我的X是Y" mapped to the English subject the
# English patterns produce, so both languages fill the same slot.
ZH_ATTRIBUTES = {
    "颜色": "color",
    "食物": "food",
    "饮料": "drink",
    "饮品": "drink",
    "编程语言": "programming language",
    "语言": "language",
    "电影": "movie",
    "书": "book",
    "歌": "song",
    "歌手": "singer",
    "运动": "sport",
    "城市": "city",
    "水果": "fruit",
    "动物": "animal",
    "编辑器": "editor",
    "名字": "name",
    "生日": "birthday",
    "邮箱": "email",
    "电话": "phone number",
    "手机号": "phone number",
    "职业": "occupation",
    "工作": "occupation",
    "公司": "employer",
    "老家": "hometown",
    "家乡": "hometown",
}

_TERMS = sorted(((term, domain) for domain, terms in _DOMAINS.items() for term in terms), key=lambda t: -len(t[0]))
_DOMAIN_OF_TERM = dict(_TERMS)
# One alternation per script, longest terms first so that "green tea" wins over "tea" at a position.
_ASCII_TERMS = re.compile(
    r"(?<![\w.+#])(?:" + "|".join(re.escape(t) for t, _ in _TERMS if t.isascii()) + r")(?![\w+#])", re.I
)
_CJK_TERMS = re.compile("|".join(re.escape(t) for t, _ in _TERMS if not t.isascii()))


def known_terms(text: str) -> list[tuple[str, str]]:
    """(surface text, domain) of every known term in `text`, in order, longest at each position."""
    found = [(m.start(), m.group(0)) for m in _ASCII_TERMS.finditer(text)]
    found += [(m.start(), m.group(0)) for m in _CJK_TERMS.finditer(text)]
    return [(surface, _DOMAIN_OF_TERM[surface.lower()]) for _, surface in sorted(found)]


def domain_of(text: str) -> str:
    """The domain of the first known term in `text`, or ""."""
    terms = known_terms(text)
    return terms[0][1] if terms else ""
