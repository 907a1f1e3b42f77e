"""The part of JSON Schema a reply check needs, with no dependency.

Covers type, enum, const, properties / required / additionalProperties, items (a schema
or a tuple), min/max items and properties, uniqueItems, string lengths and pattern,
numeric bounds and multipleOf, allOf / anyOf / oneOf / not, and `$ref` into the same
document (`#/definitions/...`, `#/$defs/...`). Keywords it does not know are ignored,
which is what the standard asks of a validator anyway.
"""

from __future__ import annotations

import re
from typing import Any

_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float))
    return False


def check_schema(schema: Any, where: str = "schema") -> str | None:
    """A problem that makes `schema` unusable (an unknown type name, a bad pattern)."""
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, dict):
        return f"{where} must be an object or a boolean"
    types = schema.get("type")
    for t in types if isinstance(types, list) else [types] if types is not None else []:
        if t not in _TYPES:
            return f"{where}: unknown type {t!r}"
    if "pattern" in schema:
        try:
            re.compile(schema["pattern"])
        except (re.error, TypeError) as exc:
            return f"{where}: bad pattern ({exc})"
    for key in ("properties", "definitions", "$defs", "patternProperties"):
        for name, sub in (schema.get(key) or {}).items():
            problem = check_schema(sub, f"{where}.{key}.{name}")
            if problem:
                return problem
    for key in ("items", "additionalProperties", "not"):
        sub = schema.get(key)
        if isinstance(sub, list):
            for i, part in enumerate(sub):
                problem = check_schema(part, f"{where}.{key}[{i}]")
                if problem:
                    return problem
        elif sub is not None:
            problem = check_schema(sub, f"{where}.{key}")
            if problem:
                return problem
    for key in ("allOf", "anyOf", "oneOf"):
        for i, part in enumerate(schema.get(key) or []):
            problem = check_schema(part, f"{where}.{key}[{i}]")
            if problem:
                return problem
    return None


def _resolve(ref: str, root: dict[str, Any]) -> Any:
    if not ref.startswith("#"):
        raise ValueError(f"only local $ref is supported, got {ref!r}")
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise ValueError(f"$ref {ref!r} points nowhere")
        node = node[part]
    return node


def validate(value: Any, schema: Any, root: Any = None, path: str = "$") -> list[str]:
    """Every way `value` breaks `schema`, each naming where (`$.items[2].id`)."""
    root = schema if root is None else root
    if schema is True:
        return []
    if schema is False:
        return [f"{path}: not allowed"]
    if not isinstance(schema, dict):
        return []
    if "$ref" in schema:
        try:
            target = _resolve(schema["$ref"], root)
        except ValueError as exc:
            return [f"{path}: {exc}"]
        return validate(value, target, root, path)
    errors: list[str] = []
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(_is_type(value, t) for t in names):
            return [f"{path}: expected {' or '.join(names)}, got {_kind(value)}"]
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        errors.append(f"{path}: {_show(value)} is not one of {_show(schema['enum'])}")
    if "const" in schema and not _same(value, schema["const"]):
        errors.append(f"{path}: expected {_show(schema['const'])}")
    if isinstance(value, dict):
        errors += _object(value, schema, root, path)
    elif isinstance(value, list):
        errors += _array(value, schema, root, path)
    elif isinstance(value, str):
        errors += _string(value, schema, path)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        errors += _number(value, schema, path)
    for i, part in enumerate(schema.get("allOf") or []):
        errors += validate(value, part, root, f"{path}(allOf[{i}])")
    if "anyOf" in schema and not any(not validate(value, p, root, path) for p in schema["anyOf"]):
        errors.append(f"{path}: matches none of anyOf")
    if "oneOf" in schema:
        hits = sum(1 for p in schema["oneOf"] if not validate(value, p, root, path))
        if hits != 1:
            errors.append(f"{path}: matches {hits} of oneOf, expected exactly 1")
    if "not" in schema and not validate(value, schema["not"], root, path):
        errors.append(f"{path}: matches a schema it must not")
    return errors


def _object(value: dict[str, Any], schema: dict[str, Any], root: Any, path: str) -> list[str]:
    errors = [
        f"{path}: missing required '{k}'" for k in schema.get("required") or [] if k not in value
    ]
    props = schema.get("properties") or {}
    patterns = schema.get("patternProperties") or {}
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        where = f"{path}.{key}"
        matched = False
        if key in props:
            matched = True
            errors += validate(item, props[key], root, where)
        for pat, sub in patterns.items():
            if re.search(pat, key):
                matched = True
                errors += validate(item, sub, root, where)
        if not matched:
            if extra is False:
                errors.append(f"{path}: unexpected property '{key}'")
            elif isinstance(extra, dict):
                errors += validate(item, extra, root, where)
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        errors.append(f"{path}: fewer than {schema['minProperties']} properties")
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        errors.append(f"{path}: more than {schema['maxProperties']} properties")
    return errors


def _array(value: list[Any], schema: dict[str, Any], root: Any, path: str) -> list[str]:
    errors: list[str] = []
    items = schema.get("items")
    if isinstance(items, list):
        for i, (item, sub) in enumerate(zip(value, items, strict=False)):
            errors += validate(item, sub, root, f"{path}[{i}]")
    elif items is not None:
        for i, item in enumerate(value):
            errors += validate(item, items, root, f"{path}[{i}]")
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(f"{path}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(f"{path}: more than {schema['maxItems']} items")
    if schema.get("uniqueItems"):
        seen: list[Any] = []
        for item in value:
            if any(_same(item, s) for s in seen):
                errors.append(f"{path}: items are not unique")
                break
            seen.append(item)
    return errors


def _string(value: str, schema: dict[str, Any], path: str) -> list[str]:
    errors: list[str] = []
    if "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(f"{path}: shorter than {schema['minLength']}")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(f"{path}: longer than {schema['maxLength']}")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        errors.append(f"{path}: does not match /{schema['pattern']}/")
    return errors


def _number(value: float, schema: dict[str, Any], path: str) -> list[str]:
    errors: list[str] = []
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: below minimum {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: above maximum {schema['maximum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        errors.append(f"{path}: not above {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        errors.append(f"{path}: not below {schema['exclusiveMaximum']}")
    step = schema.get("multipleOf")
    if step and abs(value / step - round(value / step)) > 1e-9:
        errors.append(f"{path}: not a multiple of {step}")
    return errors


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _kind(value: Any) -> str:
    for t in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is_type(value, t):
            return t
    return type(value).__name__


def _show(value: Any, n: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 1] + "…"
