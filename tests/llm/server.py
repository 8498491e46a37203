#!/usr/bin/env python3
"""A scripted fake LLM provider for csrun's integration tests.

    python3 tests/llm/server.py --script SCRIPT.json --port-file FILE --log LOG.jsonl
                                [--key EXPECTED_KEY | --no-key] [--tls-cert CERT --tls-key KEY]
                                [--parent-pid PID] [--lifetime SECONDS]

It listens on 127.0.0.1 on an ephemeral port, writes the port to --port-file
(atomically) once listening, and answers the four wire formats csrun speaks
(src/lib/llm/llm.h):

    openai     POST /v1/chat/completions
    anthropic  POST /v1/messages
    gemini     POST /v1beta/models/{model}:generateContent
    ollama     POST /api/chat

Every request is checked strictly against its provider's shape; a request
with a shape problem gets 400 {"error": {"message": "shape: ..."}} (404 for an
unknown endpoint, 405 for a known one with the wrong method) and does NOT
consume a script step.  Every other request consumes the next step of the
script (a JSON list shared by all providers):

    {"reply": "TEXT"}                        200, TEXT in the provider's success format
        optional: "input_tokens", "output_tokens" (defaults 10 and 5), "model" (the
        model the reply says it used; default: the one requested)
    {"kind": "rate_limit", "retry_after": 1} 429 + Retry-After + the provider's error
        optional: "retry_after" (number or string; absent: no hint at all),
        "retry_after_header": false (gemini: keep only the body's RetryInfo)
    {"kind": "overloaded"}                   529 anthropic overloaded_error (any provider)
    {"kind": "server_error", "status": 503}  500..599 (default 500) with an error JSON
    {"kind": "quota"}                        the provider's quota / spend-limit error
    {"kind": "malformed"}                    200 with a body that is not JSON
        optional: "body" (the text to send instead of the default)
    {"kind": "blocked"}                      gemini: 200 promptFeedback.blockReason, no
        candidates; optional "reason" (default SAFETY), "candidate": true (a
        candidate with finishReason REASON and no text instead); others: 400
    {"kind": "auth"}                         401 invalid key, the message quotes the
                                             key the client sent
    {"status": N, "headers": {...}, "body": OBJECT-or-STRING}   raw
    any step: "delay": SECONDS (sleep before answering), "comment": "..."

When the script is exhausted: 500 {"error": {"message": "script exhausted"}}
and the shape error "script exhausted" is logged.

The log (--log) gets one JSON line per request, flushed at once and written
before any delay, so a client that timed out still finds its request there:
  {"n", "provider", "method", "path", "query", "headers", "body", "step",
   "step_index", "status", "tls", "shape_errors"}

Standard library only.  SIGTERM and SIGINT stop it cleanly (exit 0).
"""

import argparse
import json
import os
import re
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 16 * 1024 * 1024
CONN_TIMEOUT = 60.0  # idle keep-alive connections and TLS handshakes give up after this

PROVIDERS = ("openai", "anthropic", "gemini", "ollama")

# ------------------------------------------------------------------ the script

COMMON_STEP_KEYS = {"delay", "comment"}
KIND_KEYS = {
    "rate_limit": {"retry_after", "retry_after_header"},
    "overloaded": set(),
    "server_error": {"status"},
    "quota": set(),
    "malformed": {"body"},
    "blocked": {"reason", "candidate"},
    "auth": set(),
}


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def validate_step(i, step):
    """Return a list of problems with script step I (0-based)."""
    where = "step %d" % (i + 1)
    if not isinstance(step, dict):
        return ["%s: not a JSON object" % where]
    problems = []
    if "delay" in step and not (_is_number(step["delay"]) and step["delay"] >= 0):
        problems.append("%s: delay must be a number >= 0" % where)
    if "reply" in step:
        allowed = COMMON_STEP_KEYS | {"reply", "input_tokens", "output_tokens", "model"}
        if not isinstance(step["reply"], str):
            problems.append("%s: reply must be a string" % where)
        if "model" in step and not (isinstance(step["model"], str) and step["model"]):
            problems.append("%s: model must be a non-empty string" % where)
        for k in ("input_tokens", "output_tokens"):
            if k in step and not _is_int(step[k]):
                problems.append("%s: %s must be an integer" % (where, k))
    elif "kind" in step:
        kind = step["kind"]
        if kind not in KIND_KEYS:
            return problems + ["%s: unknown kind %r (known: %s)" % (where, kind, ", ".join(sorted(KIND_KEYS)))]
        allowed = COMMON_STEP_KEYS | {"kind"} | KIND_KEYS[kind]
        if kind == "rate_limit" and "retry_after" in step:
            ra = step["retry_after"]
            if not ((_is_number(ra) and ra >= 0) or isinstance(ra, str)):
                problems.append("%s: retry_after must be a number >= 0 or a string" % where)
        if kind == "rate_limit" and "retry_after_header" in step and not isinstance(step["retry_after_header"], bool):
            problems.append("%s: retry_after_header must be true or false" % where)
        if kind == "server_error" and "status" in step:
            if not (_is_int(step["status"]) and 500 <= step["status"] <= 599):
                problems.append("%s: server_error status must be an integer in 500..599" % where)
        if kind == "malformed" and "body" in step and not isinstance(step["body"], str):
            problems.append("%s: malformed body must be a string" % where)
        if kind == "blocked":
            if "reason" in step and not (isinstance(step["reason"], str) and step["reason"]):
                problems.append("%s: reason must be a non-empty string" % where)
            if "candidate" in step and not isinstance(step["candidate"], bool):
                problems.append("%s: candidate must be true or false" % where)
    elif "status" in step:
        allowed = COMMON_STEP_KEYS | {"status", "headers", "body"}
        if not (_is_int(step["status"]) and 100 <= step["status"] <= 599):
            problems.append("%s: status must be an integer in 100..599" % where)
        hdrs = step.get("headers", {})
        if not isinstance(hdrs, dict) or not all(isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in hdrs.items()):
            problems.append("%s: headers must be an object of strings" % where)
    else:
        return problems + ["%s: needs \"reply\", \"kind\" or \"status\"" % where]
    extra = sorted(set(step) - allowed)
    if extra:
        problems.append("%s: unknown key(s) %s" % (where, ", ".join(extra)))
    return problems


class Script:
    def __init__(self, steps):
        self.steps = steps
        self.next = 0

    def take(self):
        """The next step and its 1-based index, or (None, None).  Call under the server lock."""
        if self.next >= len(self.steps):
            return None, None
        step = self.steps[self.next]
        self.next += 1
        return step, self.next


def load_script(path):
    with open(path, "r", encoding="utf-8") as f:
        steps = json.load(f)
    if not isinstance(steps, list):
        raise ValueError("the script must be a JSON list of steps")
    problems = []
    for i, step in enumerate(steps):
        problems += validate_step(i, step)
    if problems:
        raise ValueError("; ".join(problems))
    return Script(steps)


# ------------------------------------------------------------------ shape checks

def _type_name(v):
    return type(v).__name__ if v is not None else "null"


def _check_unknown(obj, allowed, where, errors):
    for k in sorted(set(obj) - set(allowed)):
        errors.append("%s: unknown field %r" % (where, k))


def _check_model(body, errors):
    m = body.get("model")
    if "model" not in body:
        errors.append("body: missing \"model\"")
    elif not (isinstance(m, str) and m.strip()):
        errors.append("body: \"model\" must be a non-empty string")


def _check_number(body, name, errors, lo=None, hi=None, integer=False, positive=False):
    if name not in body:
        return
    v = body[name]
    ok = _is_int(v) if integer else _is_number(v)
    if not ok:
        errors.append("body: %r must be %s, not %s" % (name, "an integer" if integer else "a number", _type_name(v)))
        return
    if positive and v <= 0:
        errors.append("body: %r must be > 0" % name)
    if lo is not None and v < lo or hi is not None and v > hi:
        errors.append("body: %r out of range" % name)


def _check_no_stream(body, errors):
    if "stream" in body and body["stream"] is not False:
        errors.append("body: \"stream\" must be false (csrun does not read event streams)")


def _check_chat_messages(body, errors, roles, message_keys):
    """openai and ollama: messages [{role, content string}] with a user message."""
    msgs = body.get("messages")
    if "messages" not in body:
        errors.append("body: missing \"messages\"")
        return
    if not isinstance(msgs, list) or not msgs:
        errors.append("body: \"messages\" must be a non-empty list")
        return
    users = 0
    for i, m in enumerate(msgs):
        where = "messages[%d]" % i
        if not isinstance(m, dict):
            errors.append("%s: not an object" % where)
            continue
        role = m.get("role")
        if role not in roles:
            errors.append("%s: role %r is not one of %s" % (where, role, "/".join(roles)))
        if role == "user":
            users += 1
        if not isinstance(m.get("content"), str):
            errors.append("%s: content must be a string, not %s" % (where, _type_name(m.get("content"))))
        _check_unknown(m, message_keys, where, errors)
    if users == 0:
        errors.append("body: no message with role \"user\"")


def _media_type(headers):
    return headers.get("content-type", "").split(";")[0].strip().lower()


def _bearer(headers):
    auth = headers.get("authorization")
    if auth is None:
        return None
    m = re.fullmatch(r"Bearer (\S.*)", auth.strip())
    return m.group(1).strip() if m else ""


def sent_key(provider, headers, query):
    """The API key the client sent (for the auth step's message), or None."""
    if provider == "anthropic":
        return headers.get("x-api-key")
    if provider == "gemini":
        k = headers.get("x-goog-api-key")
        if k is None:
            for name, value in urllib.parse.parse_qsl(query, keep_blank_values=True):
                if name == "key":
                    return value
        return k
    return _bearer(headers) or None


# --no-key: a local server that takes no key; any key header is a shape error.
NO_KEY = object()


def _check_key(name, got, expected, errors):
    if expected is NO_KEY:
        if got is not None:
            errors.append("%s header sent to a server that takes no key" % name)
        return
    if got is None:
        errors.append("missing %s header" % name)
    elif not got:
        errors.append("empty %s header" % name)
    elif expected is not None and got != expected:
        errors.append("%s: wrong API key (%d characters sent, %d expected)" % (name, len(got), len(expected)))


def check_openai(headers, body, ctx, errors):
    got = _bearer(headers)
    if ctx["key"] is NO_KEY and "authorization" in headers:
        got = headers["authorization"]
    if got == "" and ctx["key"] is not NO_KEY:
        errors.append("Authorization: expected \"Bearer KEY\"")
    else:
        _check_key("Authorization: Bearer", got, ctx["key"], errors)
    if body is None:
        return
    _check_unknown(body, ("model", "messages", "temperature", "max_tokens", "max_completion_tokens",
                          "top_p", "stream", "n", "stop", "seed", "user", "response_format",
                          "presence_penalty", "frequency_penalty"), "body", errors)
    _check_model(body, errors)
    _check_chat_messages(body, errors, ("system", "user", "assistant"), ("role", "content", "name"))
    _check_number(body, "temperature", errors, lo=0, hi=2)
    _check_number(body, "max_tokens", errors, integer=True, positive=True)
    _check_number(body, "max_completion_tokens", errors, integer=True, positive=True)
    _check_no_stream(body, errors)


def check_anthropic(headers, body, ctx, errors):
    _check_key("x-api-key", headers.get("x-api-key"), ctx["key"], errors)
    version = headers.get("anthropic-version")
    if version is None:
        errors.append("missing anthropic-version header")
    elif version != "2023-06-01":
        errors.append("anthropic-version: %r, expected \"2023-06-01\"" % version)
    if body is None:
        return
    _check_unknown(body, ("model", "messages", "max_tokens", "system", "temperature", "top_p", "top_k",
                          "stop_sequences", "stream", "metadata"), "body", errors)
    _check_model(body, errors)
    if "max_tokens" not in body:
        errors.append("body: missing \"max_tokens\" (required by anthropic)")
    else:
        _check_number(body, "max_tokens", errors, integer=True, positive=True)
    if "system" in body and not isinstance(body["system"], str):
        errors.append("body: \"system\" must be a string, not %s" % _type_name(body["system"]))
    _check_number(body, "temperature", errors, lo=0, hi=1)
    _check_no_stream(body, errors)
    msgs = body.get("messages")
    if "messages" not in body:
        errors.append("body: missing \"messages\"")
        return
    if not isinstance(msgs, list) or not msgs:
        errors.append("body: \"messages\" must be a non-empty list")
        return
    for i, m in enumerate(msgs):
        where = "messages[%d]" % i
        if not isinstance(m, dict):
            errors.append("%s: not an object" % where)
            continue
        role = m.get("role")
        if role not in ("user", "assistant"):
            errors.append("%s: role %r is not user/assistant (the system prompt goes in \"system\")" % (where, role))
        if i == 0 and role != "user":
            errors.append("messages[0]: the first message must have role \"user\"")
        content = m.get("content")
        if isinstance(content, list):
            if not content:
                errors.append("%s: content is an empty list" % where)
            for j, block in enumerate(content):
                if not (isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)):
                    errors.append("%s.content[%d]: expected {\"type\": \"text\", \"text\": string}" % (where, j))
        elif not isinstance(content, str):
            errors.append("%s: content must be a string or a list of text blocks, not %s" % (where, _type_name(content)))
        _check_unknown(m, ("role", "content"), where, errors)


def _check_gemini_parts(parts, where, errors):
    if not isinstance(parts, list) or not parts:
        errors.append("%s.parts: must be a non-empty list" % where)
        return
    for j, p in enumerate(parts):
        if not (isinstance(p, dict) and isinstance(p.get("text"), str)):
            errors.append("%s.parts[%d]: expected {\"text\": string}" % (where, j))
        elif set(p) - {"text"}:
            errors.append("%s.parts[%d]: unknown field(s) %s" % (where, j, ", ".join(sorted(set(p) - {"text"}))))


def check_gemini(headers, body, ctx, errors):
    _check_key("x-goog-api-key", headers.get("x-goog-api-key"), ctx["key"], errors)
    names = [name for name, _ in urllib.parse.parse_qsl(ctx["query"], keep_blank_values=True)]
    if "key" in names:
        errors.append("the API key is passed in the URL (\"key=\" query parameter); use the x-goog-api-key header")
    if not ctx["model"].strip():
        errors.append("path: empty model in /v1beta/models/{model}:generateContent")
    if body is None:
        return
    _check_unknown(body, ("contents", "systemInstruction", "system_instruction", "generationConfig",
                          "generation_config", "safetySettings", "safety_settings"), "body", errors)
    contents = body.get("contents")
    if "contents" not in body:
        errors.append("body: missing \"contents\"")
    elif not isinstance(contents, list) or not contents:
        errors.append("body: \"contents\" must be a non-empty list")
    else:
        users = 0
        for i, c in enumerate(contents):
            where = "contents[%d]" % i
            if not isinstance(c, dict):
                errors.append("%s: not an object" % where)
                continue
            role = c.get("role", "user")
            if role not in ("user", "model"):
                errors.append("%s: role %r is not user/model" % (where, role))
            if role == "user":
                users += 1
            _check_gemini_parts(c.get("parts"), where, errors)
            _check_unknown(c, ("role", "parts"), where, errors)
        if users == 0:
            errors.append("body: no content with role \"user\"")
    for name in ("systemInstruction", "system_instruction"):
        if name in body:
            si = body[name]
            if not isinstance(si, dict):
                errors.append("body: %r must be an object" % name)
            else:
                _check_gemini_parts(si.get("parts"), name, errors)
                _check_unknown(si, ("role", "parts"), name, errors)
    for name in ("generationConfig", "generation_config"):
        if name in body:
            gc = body[name]
            if not isinstance(gc, dict):
                errors.append("body: %r must be an object" % name)
            else:
                _check_number(gc, "temperature", errors, lo=0, hi=2)
                _check_number(gc, "maxOutputTokens", errors, integer=True, positive=True)
                _check_number(gc, "max_output_tokens", errors, integer=True, positive=True)


def check_ollama(headers, body, ctx, errors):
    if body is None:
        return
    _check_unknown(body, ("model", "messages", "stream", "options", "format", "keep_alive", "think"),
                   "body", errors)
    _check_model(body, errors)
    _check_chat_messages(body, errors, ("system", "user", "assistant"), ("role", "content", "images"))
    if "stream" not in body:
        errors.append("body: missing \"stream\": false (ollama streams by default)")
    elif body["stream"] is not False:
        errors.append("body: \"stream\" must be exactly false, not %s" % json.dumps(body["stream"]))
    if "options" in body:
        if not isinstance(body["options"], dict):
            errors.append("body: \"options\" must be an object")
        else:
            _check_number(body["options"], "temperature", errors, lo=0, hi=2)
            _check_number(body["options"], "num_predict", errors, integer=True)


CHECKS = {"openai": check_openai, "anthropic": check_anthropic, "gemini": check_gemini, "ollama": check_ollama}


def route(path):
    """(provider, model-from-path) for a request path, or (None, None)."""
    if path == "/v1/chat/completions":
        return "openai", None
    if path == "/v1/messages":
        return "anthropic", None
    if path == "/api/chat":
        return "ollama", None
    m = re.fullmatch(r"/v1beta/models/([^/]*):generateContent", path)
    if m:
        return "gemini", urllib.parse.unquote(m.group(1))
    return None, None


# ------------------------------------------------------------------ responses

def _fmt_seconds(v):
    if _is_number(v) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _openai_error(message, etype, code=None, param=None):
    return {"error": {"message": message, "type": etype, "param": param, "code": code}}


def _anthropic_error(etype, message):
    return {"type": "error", "error": {"type": etype, "message": message},
            "request_id": "req_fake_%d" % int(time.time() * 1000)}


def _gemini_error(code, status, message, details=None):
    err = {"code": code, "message": message, "status": status}
    if details:
        err["details"] = details
    return {"error": err}


def reply_body(provider, text, model, step, n):
    tin = step.get("input_tokens", 10)
    tout = step.get("output_tokens", 5)
    if provider == "openai":
        return {"id": "chatcmpl-fake%d" % n, "object": "chat.completion", "created": int(time.time()),
                "model": model, "system_fingerprint": "fp_fake",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                             "logprobs": None, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}}
    if provider == "anthropic":
        return {"id": "msg_fake%d" % n, "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": tin, "output_tokens": tout}}
    if provider == "gemini":
        return {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": tin, "candidatesTokenCount": tout,
                                  "totalTokenCount": tin + tout},
                "modelVersion": model, "responseId": "fake%d" % n}
    return {"model": model, "created_at": time.strftime("%Y-%m-%dT%H:%M:%S.000000000Z", time.gmtime()),
            "message": {"role": "assistant", "content": text}, "done_reason": "stop", "done": True,
            "total_duration": 1000000, "load_duration": 1000, "prompt_eval_count": tin,
            "prompt_eval_duration": 1000, "eval_count": tout, "eval_duration": 1000}


def step_response(provider, step, model, key, n):
    """(status, headers dict, body bytes) for a script step."""
    hdrs = {}
    body = None

    if "reply" in step:
        return 200, hdrs, reply_body(provider, step["reply"], step.get("model", model), step, n)

    if "kind" not in step:  # raw
        raw = step.get("body", "")
        hdrs = {k: str(v) for k, v in step.get("headers", {}).items()}
        if not isinstance(raw, str):
            raw = json.dumps(raw)
        return step["status"], hdrs, raw

    kind = step["kind"]
    if kind == "rate_limit":
        ra = step.get("retry_after")
        if ra is not None and step.get("retry_after_header", True):
            hdrs["Retry-After"] = _fmt_seconds(ra)
        if provider == "openai":
            wait = " Please try again in %ss." % _fmt_seconds(ra) if _is_number(ra) else ""
            body = _openai_error("Rate limit reached for %s in organization org-fake on requests per min (RPM): "
                                 "Limit 3, Used 3, Requested 1.%s" % (model, wait), "requests",
                                 code="rate_limit_exceeded")
        elif provider == "anthropic":
            body = _anthropic_error("rate_limit_error", "This request would exceed the rate limit for your "
                                    "organization of 5 requests per minute. Please reduce the rate of requests.")
        elif provider == "gemini":
            details = [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                 "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                                 "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                                 "quotaDimensions": {"location": "global", "model": model},
                                 "quotaValue": "10"}]},
                {"@type": "type.googleapis.com/google.rpc.Help",
                 "links": [{"description": "Learn more about Gemini API quotas",
                            "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
            ]
            if _is_number(ra):
                details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo",
                                "retryDelay": "%ss" % _fmt_seconds(ra)})
            body = _gemini_error(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", details)
        else:
            body = {"error": "too many requests, please retry later"}
        return 429, hdrs, body

    if kind == "overloaded":
        return 529, hdrs, _anthropic_error("overloaded_error", "Overloaded")

    if kind == "server_error":
        status = step.get("status", 500)
        if provider == "openai":
            body = _openai_error("The server had an error while processing your request. Sorry about that!",
                                 "server_error")
        elif provider == "anthropic":
            body = _anthropic_error("api_error", "Internal server error")
        elif provider == "gemini":
            gstatus = {503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}.get(status, "INTERNAL")
            msg = {503: "The model is overloaded. Please try again later.",
                   504: "Deadline expired before operation could complete."}.get(
                status, "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting")
            body = _gemini_error(status, gstatus, msg)
        else:
            body = {"error": "internal server error (HTTP %d)" % status}
        return status, hdrs, body

    if kind == "quota":
        if provider == "openai":
            return 429, hdrs, _openai_error("You exceeded your current quota, please check your plan and billing "
                                            "details. For more information on this error, read the docs: "
                                            "https://platform.openai.com/docs/guides/error-codes/api-errors.",
                                            "insufficient_quota", code="insufficient_quota")
        if provider == "anthropic":
            return 400, hdrs, _anthropic_error("invalid_request_error",
                                               "enforced_spend_limit_reached: You have reached your specified API "
                                               "usage limits. You will regain access on 2099-01-01 at 00:00 UTC.")
        if provider == "gemini":
            details = [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                 "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                                 "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                                 "quotaDimensions": {"location": "global", "model": model},
                                 "quotaValue": "250"}]},
                {"@type": "type.googleapis.com/google.rpc.Help",
                 "links": [{"description": "Learn more about Gemini API quotas",
                            "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
                # The real service adds a retry hint even for a per-day quota;
                # csrun must not retry anyway.
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"},
            ]
            return 429, hdrs, _gemini_error(429, "RESOURCE_EXHAUSTED",
                                            "You exceeded your current quota, please check your plan and billing "
                                            "details. For more information on this error, head to: "
                                            "https://ai.google.dev/gemini-api/docs/rate-limits.", details)
        return 429, hdrs, {"error": "quota exceeded"}

    if kind == "malformed":
        default = {"openai": '{"choices": [', "anthropic": '{"content": [{"type": "text", "text": "',
                   "gemini": '{"candidates": [{"content": {"parts": [', "ollama": '{"message": {"role": "assistant"'}
        return 200, hdrs, step.get("body", default[provider])

    if kind == "blocked":
        reason = step.get("reason", "SAFETY")
        if provider == "gemini":
            if step.get("candidate"):
                return 200, hdrs, {"candidates": [{"finishReason": reason, "index": 0}],
                                   "usageMetadata": {"promptTokenCount": 10, "totalTokenCount": 10},
                                   "modelVersion": model}
            return 200, hdrs, {"promptFeedback": {"blockReason": reason},
                               "usageMetadata": {"promptTokenCount": 10, "totalTokenCount": 10},
                               "modelVersion": model}
        if provider == "openai":
            return 400, hdrs, _openai_error("Your request was rejected as a result of our safety system.",
                                            "invalid_request_error", code="content_policy_violation")
        if provider == "anthropic":
            return 400, hdrs, _anthropic_error("invalid_request_error",
                                               "Your request was flagged by our content filter (%s)." % reason)
        return 400, hdrs, {"error": "request blocked (%s)" % reason}

    if kind == "auth":
        k = key if key else "(no key)"
        if provider == "openai":
            body = _openai_error("Incorrect API key provided: %s. You can find your API key at "
                                 "https://platform.openai.com/account/api-keys." % k,
                                 "invalid_request_error", code="invalid_api_key")
        elif provider == "anthropic":
            body = _anthropic_error("authentication_error", "invalid x-api-key: %s" % k)
        elif provider == "gemini":
            body = _gemini_error(401, "UNAUTHENTICATED", "API key not valid: %s. Please pass a valid API key." % k,
                                 [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                                   "domain": "googleapis.com",
                                   "metadata": {"service": "generativelanguage.googleapis.com"}}])
        else:
            body = {"error": "unauthorized: invalid key %s" % k}
        return 401, hdrs, body

    raise AssertionError("unreachable: kind %r" % kind)


# ------------------------------------------------------------------ the server

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # so libcurl's "Expect: 100-continue" is answered at once
    server_version = "csrun-fake-llm/1"
    sys_version = ""

    def setup(self):
        self.request.settimeout(CONN_TIMEOUT)
        super().setup()

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("fake-llm: %s - %s\n" % (self.address_string(), fmt % args))

    def _read_body(self):
        """The request body (bytes) and an error string or None."""
        te = self.headers.get("Transfer-Encoding", "").lower()
        if "chunked" in te:
            chunks = []
            total = 0
            while True:
                line = self.rfile.readline(1024)
                if not line:
                    self.close_connection = True
                    return b"".join(chunks), "truncated chunked body"
                try:
                    size = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    self.close_connection = True
                    return b"".join(chunks), "bad chunk size line"
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks), None
                total += size
                if total > MAX_BODY:
                    self.close_connection = True
                    return b"", "body larger than %d bytes" % MAX_BODY
                chunks.append(self.rfile.read(size))
                self.rfile.readline(1024)
        length = self.headers.get("Content-Length")
        if length is None:
            return b"", None
        try:
            n = int(length)
        except ValueError:
            self.close_connection = True
            return b"", "bad Content-Length"
        if n < 0 or n > MAX_BODY:
            self.close_connection = True
            return b"", "bad Content-Length %d" % n
        data = self.rfile.read(n)
        if len(data) != n:
            self.close_connection = True
            return data, "body shorter than its Content-Length"
        return data, None

    def _any(self):
        srv = self.server
        split = urllib.parse.urlsplit(self.path)
        path, query = split.path, split.query
        headers = {}
        for name, value in self.headers.items():
            name = name.lower()
            headers[name] = headers[name] + ", " + value if name in headers else value
        raw, body_error = self._read_body()
        errors = []
        if body_error:
            errors.append("body: " + body_error)

        provider, path_model = route(path)
        body = None
        text = raw.decode("utf-8", errors="replace")
        logged_body = text
        try:
            parsed = json.loads(raw.decode("utf-8"))
            logged_body = parsed
            if isinstance(parsed, dict):
                body = parsed
            else:
                errors.append("body: not a JSON object")
        except (UnicodeDecodeError, ValueError):
            errors.append("body: not valid JSON" if raw else "body: empty")

        status = 400
        if provider is None:
            errors.insert(0, "unknown endpoint %s %s" % (self.command, path))
            status = 404
        elif self.command != "POST":
            errors.insert(0, "method %s, expected POST for %s" % (self.command, provider))
            status = 405

        key = sent_key(provider, headers, query) if provider else None
        # The key must never be in the URL, whatever the provider.
        secrets = {k for k in (None if srv.key is NO_KEY else srv.key, key, _bearer(headers), headers.get("x-api-key"),
                               headers.get("x-goog-api-key")) if k and len(k) >= 4}
        url_forms = (self.path, urllib.parse.unquote(self.path), urllib.parse.unquote_plus(self.path))
        if any(s in u for s in secrets for u in url_forms):
            errors.append("the API key appears in the URL")

        if provider is not None:
            media = _media_type(headers)
            if provider != "ollama" or "content-type" in headers:
                if media != "application/json":
                    errors.append("Content-Type: %r, expected application/json" % headers.get("content-type"))
            ctx = {"key": srv.key, "query": query, "model": path_model or ""}
            CHECKS[provider](headers, body, ctx, errors)

        step = step_index = None
        with srv.lock:
            srv.count += 1
            n = srv.count
            if errors:
                out = (status, {}, {"error": {"message": "shape: " + "; ".join(errors)}})
            else:
                step, step_index = srv.script.take()
                if step is None:
                    errors.append("script exhausted")
                    out = (500, {}, {"error": {"message": "script exhausted"}})
                else:
                    model = path_model if provider == "gemini" else body.get("model", "")
                    out = step_response(provider, step, model, key, n)
            srv.log({"n": n, "provider": provider, "method": self.command, "path": path, "query": query,
                     "headers": headers, "body": logged_body, "step": step, "step_index": step_index,
                     "status": out[0], "tls": srv.tls, "shape_errors": errors})
        for e in errors:
            sys.stderr.write("fake-llm: request %d: shape error: %s\n" % (n, e))

        if step is not None and step.get("delay"):
            time.sleep(step["delay"])
        self._send(*out)

    def _send(self, status, headers, body):
        if not isinstance(body, (str, bytes)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode("utf-8")
        try:
            self.send_response(status)
            lower = {k.lower() for k in headers}
            if "content-type" not in lower:
                self.send_header("Content-Type", "application/json")
            for k, v in headers.items():
                if k.lower() != "content-length":
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            self.wfile.flush()
        except (OSError, ssl.SSLError):
            # The client went away (a timeout test, say): nothing to answer.
            self.close_connection = True

    do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, script, log_file, key, ssl_context, verbose):
        self.script = script
        self.log_file = log_file
        self.key = key
        self.ssl_context = ssl_context
        self.tls = ssl_context is not None
        self.verbose = verbose
        self.lock = threading.Lock()
        self.count = 0
        super().__init__(("127.0.0.1", 0), Handler)

    def log(self, entry):
        self.log_file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self.log_file.flush()

    def get_request(self):
        sock, addr = self.socket.accept()
        if self.ssl_context is not None:
            # The handshake happens in the connection's thread (finish_request),
            # so a client that never completes it cannot block accept().
            sock = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def finish_request(self, request, client_address):
        if isinstance(request, ssl.SSLSocket):
            request.settimeout(CONN_TIMEOUT)
            request.do_handshake()
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ssl.SSLError, ConnectionError, socket.timeout, TimeoutError)):
            sys.stderr.write("fake-llm: connection from %s:%d: %s\n" % (client_address[0], client_address[1], exc))
            return
        super().handle_error(request, client_address)


class _Stop(BaseException):
    pass


def _raise_stop(signum, frame):
    raise _Stop()


def _watchdog(parent_pid, lifetime):
    start = time.monotonic()
    while True:
        time.sleep(0.5)
        gone = False
        if parent_pid:
            try:
                os.kill(parent_pid, 0)
            except ProcessLookupError:
                gone = True
            except PermissionError:
                pass
        if gone or (lifetime and time.monotonic() - start > lifetime):
            sys.stderr.write("fake-llm: %s, stopping\n" % ("parent %d is gone" % parent_pid if gone else
                                                           "lifetime of %g s is over" % lifetime))
            os.kill(os.getpid(), signal.SIGTERM)
            return


def write_atomically(path, text):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description="a scripted fake LLM provider for csrun's tests")
    ap.add_argument("--script", required=True, help="JSON list of steps")
    ap.add_argument("--port-file", required=True, help="written (atomically) with the port once listening")
    ap.add_argument("--log", required=True, help="JSON-lines request log (appended)")
    ap.add_argument("--key", help="the API key clients must send (default: any non-empty key)")
    ap.add_argument("--no-key", action="store_true",
                    help="a local server: clients must send no key header at all")
    ap.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    ap.add_argument("--tls-key", help="the certificate's private key (PEM)")
    ap.add_argument("--parent-pid", type=int, default=0, help="stop when this process is gone")
    ap.add_argument("--lifetime", type=float, default=0, help="stop after this many seconds (0: never)")
    ap.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = ap.parse_args(argv)

    if bool(args.tls_cert) != bool(args.tls_key):
        ap.error("--tls-cert and --tls-key go together")
    try:
        script = load_script(args.script)
    except (OSError, ValueError) as e:
        sys.stderr.write("fake-llm: %s: %s\n" % (args.script, e))
        return 2

    ctx = None
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            ctx.load_cert_chain(args.tls_cert, args.tls_key)
        except (OSError, ssl.SSLError) as e:
            sys.stderr.write("fake-llm: cannot load %s / %s: %s\n" % (args.tls_cert, args.tls_key, e))
            return 2

    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGINT, _raise_stop)

    log_file = open(args.log, "a", encoding="utf-8")
    server = None
    try:
        server = Server(script, log_file, NO_KEY if args.no_key else args.key, ctx, args.verbose)
        port = server.server_address[1]
        write_atomically(args.port_file, "%d\n" % port)
        if args.parent_pid or args.lifetime:
            threading.Thread(target=_watchdog, args=(args.parent_pid, args.lifetime), daemon=True).start()
        sys.stderr.write("fake-llm: listening on %s://127.0.0.1:%d (%d steps)\n"
                         % ("https" if ctx else "http", port, len(script.steps)))
        server.serve_forever(poll_interval=0.2)
    except _Stop:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if server is not None:
            server.server_close()
        log_file.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
