"""Text from a kernel (its exceptions, its output, what its process says) is data: before it leaves the
judge it loses every control character but newline and tab, and the bidirectional controls that make
a terminal or a window show text in another order than it is (U+202A-202E, U+2066-2069). A terminal
escape sequence (ESC [ ... ) keeps its printable tail; its power is gone with the ESC."""

import re

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def clean(text):
    """text without C0/C1 controls (but \\n and \\t) and bidi controls."""
    return _CONTROLS.sub("", text) if isinstance(text, str) else text


def clean_tree(obj):
    """Cleans every string in a result (dicts and lists changed in place, so that references others
    hold to them stay valid); returns obj (or the cleaned string)."""
    if isinstance(obj, str):
        return clean(obj)
    if isinstance(obj, dict):
        for k, v in list(obj.items()):
            obj[k] = clean_tree(v)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            obj[i] = clean_tree(v)
    return obj
