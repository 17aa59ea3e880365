"""Keyboard review: one script, installed on every page, that maps keys to the buttons and radios the
pages already draw (issue 16, part 3).

Why a script: Streamlit's own ``shortcut=`` on a button ignores a key pressed while a radio button has
the focus, so Ctrl+Enter did nothing right after the reviewer clicked a label (16 of 16 tries in a real
browser), and it offers no way to pick a radio option or to leave a text field by key. ``st.html`` with
``unsafe_allow_javascript`` runs this fixed script in the page (no iframe); it carries no logged text
and sends nothing anywhere: every key only clicks an element the page shows.

Keys (also in :data:`CHEAT_SHEET`, shown with "?"):

- Ctrl/Cmd+Enter: "Submit and next", from anywhere: after a radio click, inside a text field (whose
  text is committed first, by leaving the field).
- 1-9, 0: the 1st-9th, 10th label; Shift+1-5: the first wrong artifact (not while typing in a field).
- Left arrow: "Previous item"; Right arrow: "Skip" (not while a radio button has the focus: there the
  arrows move between its options); N: "Claim to review" (Streamlit's own shortcut handles "Review
  next" and "Continue reviewing" on the Queue page).
- Any new item (the page's title changes) is scrolled to its top.
"""

from __future__ import annotations

import json
import re

import streamlit as st

CHEAT_SHEET = (
    ("Ctrl+Enter", "submit the verdict and open the next item (from anywhere)"),
    ("1 … 9, 0", "choose the 1st … 10th label"),
    ("Shift+1 … 5", "choose the first wrong artifact"),
    ("←", "previous item (change its verdict)"),
    ("→", "skip this item"),
    ("N", "review next / claim this item"),
    ("Ctrl+Shift+S / L / P", "skip / release / previous item"),
    ("?", "show or hide these keys"),
)
"""The keys the script handles, as (key, what it does): shown by "?" and listed in the README."""


SCRIPT = """
<script>
(() => {
  const w = window;
  if (w.__rmKeys) { return; }
  w.__rmKeys = true;
  const doc = w.document;
  const text = (el) => (el.innerText || "").trim();
  // While a run draws the next item, the previous item's form is still on the page, marked stale:
  // a key must never reach it (its Submit would send the old item's form again).
  const live = (el) => !el.closest("[data-stale='true']");
  // a button's label is its paragraph: the button's own text also holds the shortcut hint
  const labelled = (b, labels) => [...b.querySelectorAll("p")].some((p) => labels.includes(text(p)));
  const button = (labels) => [...doc.querySelectorAll("button")].find(
    (b) => !b.disabled && live(b) && labelled(b, labels));
  const shown = (label) => [...doc.querySelectorAll("button")].some((b) => labelled(b, [label]));
  // Submit stays disabled until a label is chosen; the click on a radio reruns the form, so a press
  // right after it may meet the old, disabled (or stale) button: retry for up to two seconds.
  const submit = (tries) => {
    if (!press("Submit and next") && tries > 0) { setTimeout(() => submit(tries - 1), 100); }
  };
  const press = (...labels) => { const b = button(labels); if (b) { b.click(); return true; } return false; };
  const radios = (group) => [...doc.querySelectorAll("[data-testid='stRadio']")].filter((r) => {
    const caption = r.querySelector("[data-testid='stWidgetLabel']");
    return caption && text(caption) === group;
  });
  // A number key pressed while the form is redrawn (a radio click reruns it, a new item replaces it)
  // waits for the live form, for up to two seconds.
  const option = (group, n, tries) => {
    const radio = radios(group).find(live);
    if (radio) {
      const labels = radio.querySelectorAll("[role='radiogroup'] label");
      if (n < labels.length) { labels[n].click(); }
    } else if (tries > 0) {
      setTimeout(() => option(group, n, tries - 1), 50);
    }
  };
  const typing = (el) => el && (el.isContentEditable || el.tagName === "TEXTAREA"
    || (el.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(el.type)));
  const sheet = () => {
    let box = doc.getElementById("rm-keys");
    if (box) { box.remove(); return; }
    box = doc.createElement("div");
    box.id = "rm-keys";
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-label", "Keyboard shortcuts");
    box.style.cssText = "position:fixed;right:1.5rem;bottom:1.5rem;z-index:10000;background:#fff;"
      + "color:#111;border:1px solid #888;border-radius:.5rem;padding:.75rem 1rem;"
      + "box-shadow:0 2px 12px rgba(0,0,0,.25);font-size:.9rem";
    const head = doc.createElement("b");
    head.textContent = "Keys (? to close)";
    const table = doc.createElement("table");
    for (const [key, what] of __SHEET__) {
      const row = table.insertRow();
      const k = doc.createElement("kbd");
      k.textContent = key;
      row.insertCell().appendChild(k);
      row.insertCell().textContent = what;
    }
    box.append(head, table);
    doc.body.appendChild(box);
  };
  w.addEventListener("keydown", (e) => {
    const el = doc.activeElement;
    if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key === "Enter") {
      if (!shown("Submit and next")) { return; }
      e.preventDefault();
      e.stopImmediatePropagation();
      // leaving a text field commits its text to the server before the click sends the form
      if (typing(el)) { el.blur(); }
      setTimeout(() => submit(20), typing(el) ? 150 : 0);
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || typing(el)) { return; }
    let done = false;
    const digit = /^Digit([0-9])$/.exec(e.code || "");
    if (digit) {
      const n = digit[1] === "0" ? 9 : Number(digit[1]) - 1;
      const group = e.shiftKey ? "First wrong artifact" : "Label";
      if (radios(group).length > 0) {
        option(group, n, 40);
        done = true;
      }
    } else if (e.key === "ArrowLeft" && !(el && el.type === "radio")) {
      done = press("Previous item");
    } else if (e.key === "ArrowRight" && !(el && el.type === "radio")) {
      done = press("Skip");
    } else if (e.key === "n" || e.key === "N") {
      done = !button(["Review next", "Continue reviewing"]) && press("Claim to review");
    } else if (e.key === "?") {
      sheet();
      done = true;
    }
    if (done) { e.preventDefault(); e.stopImmediatePropagation(); }
  }, true);
  // A new item opens at its top: Streamlit keeps the scroll position of the page it redraws.
  let title = null;
  new MutationObserver(() => {
    const h1 = doc.querySelector("h1");
    const now = h1 ? text(h1) : null;
    if (now !== title) {
      title = now;
      const main = doc.querySelector("[data-testid='stMain']");
      if (main) { main.scrollTop = 0; }
      w.scrollTo(0, 0);
    }
  }).observe(doc.body, { childList: true, subtree: true, characterData: true });
})();
</script>
""".replace("__SHEET__", json.dumps(CHEAT_SHEET))
# DOMPurify, which st.html runs even on allowed scripts, drops a script whose text has "<" before a
# letter or "/" (its SAFE_FOR_XML rule): the script builds its markup with DOM calls instead.
assert re.search(r"<[/\w!]", SCRIPT.removeprefix("\n<script>").removesuffix("</script>\n")) is None


def install() -> None:
    """Put the key script on the page (once per browser tab: the script guards itself)."""
    st.html(SCRIPT, unsafe_allow_javascript=True)
