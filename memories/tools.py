"""The memory tools in OpenAI's function-calling format (seed 001 progressive disclosure)."""

TOOL_SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": "search_memory",
            "description": "Search long-term memories (preferences, facts, decisions, lessons). First level: "
            "use it before answering anything that may depend on what you know about the user.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for, in natural language."},
                    "top_k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
                    "categories": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_conversation_traces",
            "description": "Second level: search the raw past conversation turns when memories are not enough "
            "(exact wording, dates, details).",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "top_k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_write",
            "description": "Store a durable memory about the user. Duplicates are merged; a changed value "
            "supersedes the old one.",
            "parameters": {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "category": {
                        "type": "string",
                        "enum": [
                            "preference",
                            "fact",
                            "project",
                            "decision",
                            "workflow",
                            "skill",
                            "error",
                            "rule",
                            "todo",
                        ],
                    },
                    "importance": {"type": "number", "minimum": 0, "maximum": 1},
                },
                "required": ["content"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_forget",
            "description": "Forget the memory that best matches the description.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
]

TOOL_NAMES = tuple(t["function"]["name"] for t in TOOL_SCHEMAS)

TOOLS_DESCRIPTION = (
    "You have a long-term memory. Pinned memories about the user are listed below. "
    "Use search_memory to recall more, search_conversation_traces for exact past wording or dates, "
    "memory_write to store something durable the user tells you, and memory_forget when asked to forget."
)
