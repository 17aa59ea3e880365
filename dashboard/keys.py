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
  next" and "Continue reviewing" on the Queue page); F: show or fold the findings past the first three;
  A: accept every suggested term (a suggested term is stored only when accepted).
- A label or Ctrl+Enter pressed within 300 ms of a new item showing is dropped (typed ahead, before
  the item was seen), and a press still waiting for the form never lands on the item drawn after it.
- Any new item (the page's title changes) is scrolled to its top, both columns of the Item page too,
  and the evidence column then shows the last user message the rewriter received; the terms a label
  suggests are scrolled into view once when they appear.
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
    ("F", "show or fold the findings past the first three"),
    ("A", "accept all the suggested terms (click one to accept only it)"),
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
  // the item on screen (its title) and when it showed: a key acts on the item it was pressed on
  let title = null;
  let shownAt = 0;
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
  // ... but only while the item the key was pressed on is still the one on screen: a press that would
  // land on the next item (drawn meanwhile, never seen) is dropped.
  // The same wait serves A, pressed while the form redraws for a label just chosen: its suggestions.
  const pressSoon = (label, tries, every, on) => {
    if (title !== on) { return; }
    if (!press(label) && tries > 0) { setTimeout(() => pressSoon(label, tries - 1, every, on), every); }
  };
  const press = (...labels) => { const b = button(labels); if (b) { b.click(); return true; } return false; };
  const radios = (group) => [...doc.querySelectorAll("[data-testid='stRadio']")].filter((r) => {
    const caption = r.querySelector("[data-testid='stWidgetLabel']");
    return caption && text(caption) === group;
  });
  // A number key pressed while the form is redrawn (a radio click reruns it, a new item replaces it)
  // waits for the live form, for up to two seconds.
  const option = (group, n, tries, on) => {
    if (title !== on) { return; }
    const radio = radios(group).find(live);
    if (radio) {
      const labels = radio.querySelectorAll("[role='radiogroup'] label");
      if (n < labels.length) { labels[n].click(); }
    } else if (tries > 0) {
      setTimeout(() => option(group, n, tries - 1, on), 50);
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
  // A verdict key pressed within HOLD ms of a new item's title showing was typed ahead, before the
  // reviewer saw the item: it is dropped (issue 35: "1, Ctrl+Enter" pressed twice 50 ms apart gave
  // the next, never-drawn item an ok verdict, 4 times of 4).
  const HOLD = 300;
  const early = () => Date.now() - shownAt < HOLD;
  const drop = (e) => { e.preventDefault(); e.stopImmediatePropagation(); };
  w.addEventListener("keydown", (e) => {
    const el = doc.activeElement;
    if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && e.key === "Enter") {
      if (!shown("Submit and next")) { return; }
      drop(e);
      if (early()) { return; }
      // leaving a text field commits its text to the server before the click sends the form
      if (typing(el)) { el.blur(); }
      const on = title;
      setTimeout(() => pressSoon("Submit and next", 20, 100, on), typing(el) ? 150 : 0);
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || typing(el)) { return; }
    let done = false;
    const digit = /^Digit([0-9])$/.exec(e.code || "");
    if (digit) {
      const n = digit[1] === "0" ? 9 : Number(digit[1]) - 1;
      const group = e.shiftKey ? "First wrong artifact" : "Label";
      if (radios(group).length > 0) {
        if (!early()) { option(group, n, 40, title); }
        done = true;
      }
    } else if (e.key === "ArrowLeft" && !(el && el.type === "radio")) {
      done = press("Previous item");
    } else if (e.key === "ArrowRight" && !(el && el.type === "radio")) {
      done = press("Skip");
    } else if (e.key === "n" || e.key === "N") {
      done = !button(["Review next", "Continue reviewing"]) && press("Claim to review");
    } else if (e.key === "f" || e.key === "F") {
      const more = [...doc.querySelectorAll("details.rm-more")].find(live);
      if (more) { more.open = !more.open; done = true; }
    } else if (e.key === "a" || e.key === "A") {
      // right after a label key the form is still redrawing with that label's suggestions: wait for them
      if (radios("Label").length > 0) {
        if (!early()) { pressSoon("Accept all suggestions", 20, 50, title); }
        done = true;
      }
    } else if (e.key === "?") {
      sheet();
      done = true;
    }
    if (done) { e.preventDefault(); e.stopImmediatePropagation(); }
  }, true);
  // A new item opens at its top, and so do the Item page's two columns: Streamlit keeps the scroll
  // position of what it redraws, so the last item's scroll hid the next one's rewrite (issue 35).
  // Then, while the item is drawn (two seconds, until the reviewer scrolls or clicks), the evidence
  // column keeps the turn the rewrite was made from in view: the last user message it received.
  let settle = 0;
  const evidence = () => doc.querySelector(".st-key-rm-evidence");
  const showTurn = () => {
    const col = evidence();
    const turn = col ? [...col.querySelectorAll(".rm-latest-user")].find(live) : null;
    if (!turn) { return; }
    const r = turn.getBoundingClientRect();
    const q = col.getBoundingClientRect();
    if (r.height > q.height - 16 || r.top < q.top) {
      col.scrollTop += r.top - q.top - 8;
    } else if (r.bottom > q.bottom - 8) {
      col.scrollTop += r.bottom - q.bottom + 8;
    }
  };
  for (const type of ["wheel", "mousedown", "touchstart"]) {
    w.addEventListener(type, () => { settle = 0; }, true);
  }
  const scrolling = ["ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End", " "];
  w.addEventListener("keydown", (e) => { if (scrolling.includes(e.key)) { settle = 0; } }, true);
  // The columns end at the window's bottom wherever they start: a banner above them (running without
  // auth, a confirmation) pushed a fixed height's bottom, and the Submit button, off the screen.
  const fit = () => {
    for (const col of doc.querySelectorAll(".st-key-rm-evidence, .st-key-rm-focus")) {
      const room = Math.floor(w.innerHeight - col.getBoundingClientRect().top - 8);
      const want = Math.max(room, 240) + "px";
      if (col.style.maxHeight !== want) { col.style.maxHeight = want; }
    }
  };
  w.addEventListener("resize", fit);
  // A refused submit's error shows right above the buttons: bring both into view, once per error (the
  // column stayed scrolled at the field being typed, with the error and Submit out of sight).
  const told = new WeakSet();
  const showRefusal = () => {
    for (const alert of doc.querySelectorAll(".st-key-rm-focus [data-testid='stAlert']")) {
      if (told.has(alert) || !live(alert)) { continue; }
      told.add(alert);
      const b = button(["Submit and next"]);
      (b || alert).scrollIntoView({ block: "nearest" });
      alert.scrollIntoView({ block: "nearest" });
    }
  };
  // Suggested terms appear under the label once one is chosen: bring them into view once, so that
  // what A would accept is read first (at 1280x720 they drew below the window).
  const offered = new WeakSet();
  const showSuggestions = () => {
    for (const group of doc.querySelectorAll(".st-key-rm-focus [data-testid='stButtonGroup']")) {
      if (offered.has(group) || !live(group)) { continue; }
      offered.add(group);
      group.scrollIntoView({ block: "nearest" });
    }
  };
  new MutationObserver(() => {
    const h1 = doc.querySelector("h1");
    const now = h1 ? text(h1) : null;
    if (now !== title) {
      title = now;
      const main = doc.querySelector("[data-testid='stMain']");
      if (main) { main.scrollTop = 0; }
      w.scrollTo(0, 0);
      for (const col of doc.querySelectorAll(".st-key-rm-evidence, .st-key-rm-focus")) { col.scrollTop = 0; }
      settle = Date.now() + 2000;
      shownAt = Date.now();
    }
    fit();
    showRefusal();
    showSuggestions();
    if (Date.now() > settle) { return; }
    showTurn();
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
