"""The gateway's consent page, read as a browser would: its one POST form, the fields to send
back (hidden ones kept, passphrase, role and action filled in) and where to send them. Stdlib only,
so that tests/clients/py_oauth.py (under the `mcp` SDK) and conformance_auth.sh's driver (any
Python) share it; each raises ConsentError when the page is not what the contract says."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit


class ConsentError(Exception):
    """The authorize endpoint / consent page did not behave as the contract says."""


class FormParser(HTMLParser):
    """Collects every <form> with its <input>s and <button>s (attributes only)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[dict] = []
        self._current: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = {k.lower(): (v if v is not None else "") for k, v in attrs}
        if tag == "form":
            self._current = {"attrs": a, "inputs": [], "buttons": []}
            self.forms.append(self._current)
        elif self._current is not None and tag == "input":
            self._current["inputs"].append(a)
        elif self._current is not None and tag == "button":
            self._current["buttons"].append(a)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "form":
            self._current = None


def parse_consent_form(page: str, page_url: str, passphrase: str, role: str, action: str = "approve") -> tuple[str, dict]:
    """(absolute action URL, form fields to POST) for the consent page `page`."""
    p = FormParser()
    p.feed(page)
    p.close()
    forms = [f for f in p.forms if f["attrs"].get("method", "get").lower() == "post"]
    if len(forms) != 1:
        raise ConsentError(f"consent page has {len(forms)} <form method=post> (want exactly 1): {snippet(page)!r}")
    form = forms[0]
    action_url = urljoin(page_url, form["attrs"].get("action") or urlsplit(page_url).path)
    fields: dict[str, str] = {}
    password_names, role_values, submit_values = [], [], []
    for inp in form["inputs"]:
        kind, name = inp.get("type", "text").lower(), inp.get("name")
        if not name:
            continue
        if kind == "hidden":
            fields[name] = inp.get("value", "")
        elif kind == "password":
            password_names.append(name)
        elif kind == "radio" and name == "role":
            role_values.append(inp.get("value", ""))
        elif kind == "submit" and name == "action":
            submit_values.append(inp.get("value", ""))
    for btn in form["buttons"]:
        if btn.get("type", "submit").lower() == "submit" and btn.get("name") == "action":
            submit_values.append(btn.get("value", ""))
    missing = [n for n in ("request_id", "csrf") if n not in fields]
    if missing:
        raise ConsentError(f"consent form lacks hidden input(s) {missing}; has {sorted(fields)}")
    if "passphrase" not in password_names:
        raise ConsentError(f"consent form has no <input type=password name=passphrase> (password inputs: {password_names})")
    if role not in role_values:
        raise ConsentError(f"consent form has no radio role={role!r} (role values: {role_values})")
    if action not in submit_values:
        raise ConsentError(f"consent form has no submit name=action value={action!r} (values: {submit_values})")
    fields.update(passphrase=passphrase, role=role, action=action)
    return action_url, fields


def snippet(text: str) -> str:
    return " ".join(text.split())[:300]
