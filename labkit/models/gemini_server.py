"""Gemini's API on loopback, answering from a recording in its wire format.

``POST /{v1,v1beta}/models/{model}:streamGenerateContent?alt=sse`` streams the recorded
events (one ``data:`` line each, no ``event:`` line, no ``[DONE]``); ``:generateContent``
answers with one response, the events folded into it. ``GET /{version}/models`` and
``/{version}/models/{model}`` list what it serves. Both versions are served: the pinned
``google-genai`` SDK calls ``v1`` unless told ``v1beta``. The key may come as the
``x-goog-api-key`` header or a ``key`` query; errors are ``{"error": {"code", "message",
"status"}}``, a wrong key answered as Google answers it. The official SDK runs against it
unmodified, with ``http_options={"base_url": <url>}``.

**Thought signatures.** Like the real API, it refuses a request whose current turn (what
follows the last user text) has a ``functionCall`` whose first part lost its
``thoughtSignature``, or a signature it never gave (compared as the bytes they encode):
in strict mode and loose mode alike, when its recording's replies carry signatures. In strict
mode a request is then compared with the recorded one, read back into the loop's shape
(:func:`conversation_of`): ``systemInstruction`` as a system message in front, a user
content of one text part as the loop's message, ``snake_case`` keys as the camelCase the
API also reads, a signature as the bytes it encodes, a run of text parts as one.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
from dataclasses import replace
from urllib.parse import parse_qs

from ..harness.formats import FORMATS
from ..settings import DEFAULT_MODELS
from .gemini_chunks import gemini_event
from .replay_handler import PREFIX
from .request_shape import OBJECT, STRING, an_object, array_of, required
from .sse_handler import TEXT, SSEHandler

#: What generateContent reads of a request, and of what kinds.
ROLES = ("user", "model")
_DECLARATIONS = array_of(
    an_object("a function declaration", name=required(STRING, "{owner} has no name"))
)
CHAT_REQUEST = an_object(
    contents=required(
        array_of(
            an_object(
                "a content",
                role=replace(STRING, values=ROLES, refusal="Please use a valid role: user, model."),
                parts=required(array_of(an_object("a part")), "{where}: must not be empty"),
            )
        ),
        "* GenerateContentRequest.contents: contents is not specified",
    ),
    systemInstruction=OBJECT,
    system_instruction=OBJECT,
    tools=array_of(
        an_object(
            "a tool object",
            functionDeclarations=_DECLARATIONS,
            function_declarations=_DECLARATIONS,
        )
    ),
    generationConfig=OBJECT,
    generation_config=OBJECT,
    toolConfig=OBJECT,
    tool_config=OBJECT,
)
VERSIONS = ("v1", "v1beta")
ROUTE = re.compile(r"/(v1|v1beta)/models/([^/]+?):(generateContent|streamGenerateContent)")
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
BAD_KEY = "API key not valid. Please pass a valid API key."
TEXT_FIELDS = {"text", "thought", "thoughtSignature"}  # a part that holds text and no more


def camel(key: str) -> str:
    """``function_call`` -> ``functionCall``: the API reads both spellings of its fields."""
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def signature_bytes(text) -> bytes | None:
    """The bytes a thought signature encodes (standard or URL-safe base64, padded or not)."""
    if not isinstance(text, str):
        return None
    try:
        return base64.b64decode(text.replace("-", "+").replace("_", "/") + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


def canonical_part(part) -> object:
    """A part in the spelling the loop keeps: camelCase fields (and inside a call or a
    response, its own fields, never its arguments or result), a signature standard base64."""
    if not isinstance(part, dict):
        return part
    kept = {}
    for key, value in part.items():
        key = camel(key)
        if key in ("functionCall", "functionResponse") and isinstance(value, dict):
            value = {camel(inner): item for inner, item in value.items()}
        if key == "thoughtSignature" and (decoded := signature_bytes(value)) is not None:
            value = base64.b64encode(decoded).decode()
        kept[key] = value
    return kept


def merged_runs(parts: list) -> list:
    """Parts with each run of text pieces joined as the harness joins a streamed reply's (a
    signature ends a run and stays on its part): the same text, however it was cut."""
    merged = []
    for part in parts:
        last = merged[-1] if merged else None
        if (
            isinstance(part, dict)
            and isinstance(last, dict)
            and _plain_text(part)
            and _plain_text(last)
            and "thoughtSignature" not in last
            and part.get("thought", False) == last.get("thought", False)
        ):
            merged[-1] = {**last, **part, "text": last["text"] + part["text"]}
        else:
            merged.append(part)
    return merged


def _plain_text(part: dict) -> bool:
    return isinstance(part.get("text"), str) and set(part) <= TEXT_FIELDS


def _text_only(parts: list) -> str | None:
    if len(parts) == 1 and isinstance(parts[0], dict) and set(parts[0]) == {"text"}:
        return parts[0]["text"] if isinstance(parts[0]["text"], str) else None
    return None


def conversation_of(body: dict) -> list:
    """A generateContent request's conversation in the loop's shape."""
    messages = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        texts = [p.get("text") for p in system.get("parts") or [] if isinstance(p, dict)]
        text = "".join(t for t in texts if isinstance(t, str))
        messages.append({"role": "system", "content": text})
    for content in body["contents"]:
        role = content.get("role") or "user"
        parts = merged_runs([canonical_part(part) for part in content["parts"]])
        text = _text_only(parts) if role == "user" else None
        messages.append(
            {"role": role, "content": text} if text is not None else {"role": role, "parts": parts}
        )
    return messages


def signature_problem(messages: list, issued: set) -> str | None:
    """What the real API would refuse about the current turn's thought signatures, or None."""
    start = skip = 1 if messages and messages[0].get("role") == "system" else 0
    for index, message in enumerate(messages):
        if message.get("role") == "user" and (
            "content" in message or any("text" in part for part in message.get("parts", []))
        ):
            start = index + 1
    for index in range(start, len(messages)):
        message = messages[index]
        if message.get("role") != "model":
            continue
        calls = [n for n, part in enumerate(message["parts"]) if "functionCall" in part]
        for number, part in enumerate(message["parts"]):
            where = f"contents[{index - skip}].parts[{number}]"  # the system prompt is apart
            signed = part.get("thoughtSignature")
            if calls and number == calls[0] and signed is None:
                call = part["functionCall"]
                name = call.get("name") if isinstance(call, dict) else None
                return (
                    f"Function call is missing a thought_signature in functionCall parts "
                    f"({where}, {name!r}): send each part of the model's turn back as it came"
                )
            if signed is not None and signature_bytes(signed) not in issued:
                return (
                    f"Corrupted thought signature at {where}: it is not one this server gave; "
                    "send each signature back unchanged"
                )
    return None


def issued_signatures(turns: list) -> set:
    """The thought signatures (as bytes) a recording's replies carry."""
    return {
        signature_bytes(part.get("thoughtSignature"))
        for turn in turns
        for entry in turn["chunks"]
        for candidate in entry["chunk"].get("candidates") or []
        if isinstance(candidate, dict)
        for part in ((candidate.get("content") or {}).get("parts") or [])
        if isinstance(part, dict) and part.get("thoughtSignature")
    }


class GeminiHandler(SSEHandler):
    """Gemini's generateContent routes."""

    chat_request = CHAT_REQUEST
    garbage = b'data: {"candidates": [{"content": {"parts": [{"text": "cut\r\n\r\n'
    default_model = DEFAULT_MODELS["gemini"]
    event = staticmethod(gemini_event)

    @staticmethod
    def model_key(name: str) -> str:
        return name.removeprefix("models/")

    @classmethod
    def chunk_bytes(cls, entry: dict) -> bytes:
        return (entry.get("line") or cls.event(entry["chunk"])).encode() + b"\r\n\r\n"

    def stream_error(self, text: str) -> bytes:
        return self.event(self.error_body(500, text)).encode() + b"\r\n\r\n"

    @staticmethod
    def final(chunk: dict) -> bool:
        return any(
            isinstance(candidate, dict) and candidate.get("finishReason")
            for candidate in chunk.get("candidates") or []
        )

    def sent_key(self) -> str:
        query = parse_qs(self.path.partition("?")[2])
        return self.headers.get("x-goog-api-key") or (query.get("key") or [""])[0]

    def error_body(self, status: int, text: str) -> dict:
        name = STATUS_NAMES.get(status, "INVALID_ARGUMENT" if status < 500 else "INTERNAL")
        return {"error": {"code": status, "message": text, "status": name}}

    def _authorised(self) -> bool:
        wanted, sent = self.replay.api_key, self.sent_key()
        if wanted is None or hmac.compare_digest(sent.encode(), wanted.encode()):
            return True
        if not sent:
            self.send_json_error(
                403,
                "Method doesn't allow unregistered callers (callers without established "
                "identity). Please use API Key or other form of API consumer identity to call "
                "this API.",
            )
            return False
        body = self.error_body(400, BAD_KEY)
        body["error"]["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
            }
        ]
        self.send_json(400, body)
        return False

    def missing_model(self, name: str, version: str = "v1beta") -> str:
        return (
            f"models/{self.model_key(name)} is not found for API version {version}, or is not "
            "supported for generateContent. Call ListModels to see the list of available "
            "models and their supported methods."
        )

    def model_entry(self, name: str) -> dict:
        name = self.model_key(name)
        return {
            "name": f"models/{name}",
            "version": "replay",
            "displayName": f"{name} (labkit replay server: a recording, not a model)",
            "description": "a recording served by the labkit replay server; no model runs here",
            "inputTokenLimit": 1_048_576,
            "outputTokenLimit": 65_536,
            "supportedGenerationMethods": ["generateContent", "streamGenerateContent"],
        }

    def _get(self, head: bool):
        replay, route = self.replay, self.route
        if route == "/":
            return self.send_body(
                200, b"labkit replay server is running (not a model)", TEXT, head=head
            )
        version, _, rest = route.strip("/").partition("/")
        if version not in VERSIONS or not (rest == "models" or rest.startswith("models/")):
            return self.send_json_error(404, f"{PREFIX}no {self.command} {route}")
        if not self._authorised():
            return
        if rest == "models":
            entries = [self.model_entry(m) for m in replay.models]
            return self.send_json(200, {"models": entries, "labkit_replay": replay.identity}, head)
        name = rest.removeprefix("models/")
        if replay.serves(name):
            return self.send_json(200, self.model_entry(name), head)
        self.send_json_error(404, self.missing_model(name, version))

    def do_POST(self):
        found = ROUTE.fullmatch(self.route)
        if not found:
            return self.send_json_error(404, f"{PREFIX}no POST {self.route}")
        if not self._authorised():
            return
        version, model, method = found.groups()
        body = self.read_chat()
        replay = self.replay
        if not replay.serves(model):
            return self.send_json_error(404, self.missing_model(model, version))
        streamed = method == "streamGenerateContent"
        if streamed and parse_qs(self.path.partition("?")[2]).get("alt") != ["sse"]:
            return self.send_json_error(
                400, f"{PREFIX}this server streams server-sent events only: add ?alt=sse"
            )
        if body.get("tools") and "tools" not in replay.capabilities:
            return self.send_json_error(
                400, f"Function calling is not enabled for models/{self.model_key(model)}"
            )
        messages = conversation_of(body)
        issued = issued_signatures(replay.turns)
        problem = signature_problem(messages, issued) if issued else None
        if problem:
            replay.log(f"refused a chat request: {problem}")
            return self.send_json_error(400, problem)
        self.answer_turn(messages, self.tool_names(body), body, streamed=streamed)

    @staticmethod
    def tool_names(body: dict) -> list:
        names = []
        for tool in body.get("tools") or []:
            declarations = tool.get("functionDeclarations") or tool.get("function_declarations")
            names += [d.get("name") for d in declarations or []]
        return names

    def whole_reply(self, turn, positions, body) -> dict:
        """One response: the recorded events folded into the one they make up."""
        events = [turn["chunks"][index]["chunk"] for index in positions]
        assembler = FORMATS["gemini"].assembler()
        for event in events:
            assembler.add(event)
        candidate = {"content": {"parts": assembler.kept_parts(), "role": "model"}}
        if assembler.finish_reason:
            candidate["finishReason"] = assembler.finish_reason
        candidate["index"] = 0
        reply = {"candidates": [candidate]}
        for key in ("usageMetadata", "modelVersion", "responseId"):
            found = [event[key] for event in events if key in event]
            if found:
                reply[key] = found[-1]
        return reply
