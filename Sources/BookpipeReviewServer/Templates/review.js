// bookpipe review serve: the page's script. Every value from the library goes into the page as
// text (textContent, input values, canvas pixels), never as markup; bidirectional controls are
// shown as visible marks so a title cannot reorder what is around it.
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const state = { turned: false, items: [], index: 0, detail: null, undo: [], mode: "normal", hits: [], hit: 0, canSearch: false, loadedAt: 0 };
const $ = (id) => document.getElementById(id);

// U+061C, U+200E/F, U+202A–E, U+2066–9: made visible, never live.
const bidi = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
function shown(text) {
  return String(text ?? "").replace(bidi, (c) => "[U+" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "]");
}
function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = shown(text);
  if (cls) node.className = cls;
  return node;
}
function say(text, isError) {
  const status = $("status");
  status.textContent = shown(text);
  status.className = isError ? "error" : "";
}

async function call(method, path, body) {
  const options = { method, headers: { "X-CSRF-Token": csrf }, credentials: "same-origin" };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  return { status: response.status, data };
}

async function loadQueue(keepID) {
  const { status, data } = await call("GET", "/api/queue");
  if (status !== 200) { say(data ? data.error : "The queue cannot be read.", true); return; }
  state.items = data.items;
  state.canSearch = data.canSearch;
  if (keepID) {
    const found = state.items.findIndex((item) => item.id === keepID);
    state.index = found >= 0 ? found : Math.min(state.index, Math.max(0, state.items.length - 1));
  }
  renderQueue();
  await showCurrent();
}

function renderCounts() {
  const scan = state.items.filter((item) => item.kind === "scan").length;
  const match = state.items.filter((item) => item.kind === "match").length;
  $("counts").textContent = `${state.items.length} to review: ${scan} scan detection${scan === 1 ? "" : "s"}, ${match} uncertain match${match === 1 ? "" : "es"} (newest first)`;
}

function renderQueue() {
  renderCounts();
  const list = $("queue-list");
  const fragment = document.createDocumentFragment();
  // A window around the current item keeps 10,000 items cheap to redraw.
  const start = Math.max(0, state.index - 20), end = Math.min(state.items.length, state.index + 60);
  list.start = start + 1;
  for (let i = start; i < end; i++) {
    const item = state.items[i];
    const li = document.createElement("li");
    li.append(el("span", item.kind, "kind"), el("span", item.title, "data"));
    if (i === state.index) li.className = "current";
    fragment.append(li);
  }
  list.replaceChildren(fragment);
}

async function showCurrent() {
  renderQueue();
  const item = state.items[state.index];
  if (!item) {
    state.detail = null;
    $("title").value = ""; $("authors").value = "";
    $("meta").textContent = "Nothing left to review.";
    $("candidates").replaceChildren(); $("findings").replaceChildren(); $("provenance").textContent = "";
    $("crop").hidden = true; $("no-photo").hidden = true;
    document.body.dataset.current = "";
    document.body.dataset.kind = "";
    return;
  }
  const { status, data } = await call("GET", "/api/item?id=" + encodeURIComponent(item.id));
  if (status !== 200) { say(data ? data.error : "The item cannot be read.", true); return; }
  if (state.items[state.index] !== item) return; // moved on meanwhile
  state.detail = data;
  state.items[state.index] = data.summary;
  renderItem(data);
  state.loadedAt = performance.now();
  document.body.dataset.kind = data.summary.kind;
  document.body.dataset.current = data.summary.id;
}

function renderItem(detail) {
  const summary = detail.summary;
  $("title").value = summary.title;
  $("authors").value = summary.authors.join("; ");
  const same = sameGroup(summary).length - 1;
  const parts = [summary.kind === "scan" ? "scan detection" : "uncertain match", summary.id,
                 "confidence " + (summary.confidence == null ? "none given" : summary.confidence.toFixed(2)),
                 "review status " + detail.reviewStatus, detail.status];
  if (detail.match) parts.push("match: " + detail.match);
  if (same > 0) parts.push(`decided with ${same} identical detection${same === 1 ? "" : "s"}`);
  $("meta").textContent = shown(parts.join(" · "));
  $("provenance").textContent = "from: " + Object.entries(detail.provenance).map(([k, v]) => `${k} ${v}`).join(", ");
  const candidates = document.createDocumentFragment();
  for (const candidate of detail.candidates) {
    const li = document.createElement("li");
    li.append(el("span", candidate.title, "data"), document.createTextNode(" — "),
              el("span", candidate.authors.join(", "), "data"),
              document.createTextNode(candidate.year ? ` (${candidate.year})` : ""),
              document.createTextNode(" · "), el("span", "score " + candidate.score, "score"),
              document.createTextNode(" · " + candidate.source + " "),
              el("span", candidate.workKey, "data"), document.createElement("br"),
              el("span", candidate.breakdown.map((part) => `${part.field} ${part.points}`).join(", "), "breakdown"));
    candidates.append(li);
  }
  $("candidates").replaceChildren(candidates);
  $("findings").replaceChildren(...detail.findings.map((line) => el("li", line)));
  const canvas = $("crop"), none = $("no-photo");
  if (detail.crop) {
    const image = new Image();
    image.onload = () => drawUpright(image, canvas);
    image.src = detail.crop;
    none.hidden = true;
  } else {
    canvas.hidden = true;
    none.hidden = false;
    none.textContent = shown("No crop: " + (detail.noPhoto || "not a scan detection"));
  }
}

// A spine standing on a shelf is tall and narrow with its text running along it: turned a quarter
// (clockwise by default, which reads the bundled samples' bottom-to-top spines; `r` turns it half
// a turn more for top-to-bottom spines, and the choice holds for the session) it reads left to right, large.
let lastImage = null;
function drawUpright(image, canvas) {
  lastImage = image;
  const tall = image.naturalHeight > image.naturalWidth * 1.5;
  const context = canvas.getContext("2d");
  context.setTransform(1, 0, 0, 1, 0, 0);
  if (tall) {
    canvas.width = image.naturalHeight; canvas.height = image.naturalWidth;
    if (state.turned) { context.translate(0, canvas.height); context.rotate(-Math.PI / 2); }
    else { context.translate(canvas.width, 0); context.rotate(Math.PI / 2); }
  } else {
    canvas.width = image.naturalWidth; canvas.height = image.naturalHeight;
    if (state.turned) { context.translate(canvas.width, canvas.height); context.rotate(Math.PI); }
  }
  context.drawImage(image, 0, 0);
  canvas.hidden = false;
  canvas.dataset.upright = tall ? (state.turned ? "counter-clockwise" : "clockwise") : (state.turned ? "half-turn" : "as-is");
}

function turnCrop() {
  state.turned = !state.turned;
  if (lastImage) drawUpright(lastImage, $("crop"));
}

function sameGroup(summary) {
  if (!summary || !summary.sameAs) return summary ? [summary] : [];
  return state.items.filter((item) => item.sameAs === summary.sameAs && item.kind === "scan");
}

// The queue's list carries no versions (it is read without decoding records): the current item's
// comes with its details, a group's or a bulk selection's from /api/select, just before deciding.
async function select(query) {
  const { status, data } = await call("GET", "/api/select?" + new URLSearchParams(query).toString());
  if (status !== 200) throw new Error(data ? data.error : "The selection failed (" + status + ").");
  return data;
}

// How many decisions and undos have finished (shown, or refused): tests wait on it.
let finished = 0;
function markDone() { document.body.dataset.finished = String(++finished); }

async function decide(action, extra, targets) {
  const current = state.items[state.index];
  if (!current) return;
  let items = targets;
  if (!items) {
    const grouped = action === "verify" || action === "edit" || action === "none";
    items = grouped && sameGroup(current).length > 1 ? (await select({ like: current.id })).items : [];
    if (!items.some((item) => item.id === current.id)) items = [current];
  }
  const body = Object.assign({ action, items: items.map((item) => ({ id: item.id, version: item.version })) }, extra || {});
  const { status, data } = await call("POST", "/api/decide", body);
  if (status === 409) {
    say(data.error, true);
    await loadQueue(current.id);
  } else if (status !== 200) {
    say(data ? data.error : "The decision failed (" + status + ").", true);
  } else {
    await applyOutcome(data, action, items);
  }
  markDone();
}

function applyOutcome(data, action, decided) {
  const removed = [];
  const now = new Map(data.items.map((item) => [item.id, item]));
  for (const item of decided) {
    const index = state.items.findIndex((queued) => queued.id === item.id);
    if (index < 0) continue;
    const after = now.get(item.id);
    if (after && after.kind !== "none") { state.items[index] = after; continue; }
    removed.push({ index, item });
  }
  for (const entry of removed.slice().sort((a, b) => b.index - a.index)) {
    state.items.splice(entry.index, 1);
    if (entry.index < state.index) state.index--;
  }
  state.index = Math.min(state.index, Math.max(0, state.items.length - 1));
  state.undo.push({ actions: data.actions, removed, action });
  say(`${action}: ${decided.length} item${decided.length === 1 ? "" : "s"} saved.` + (data.notes.length ? " " + data.notes.join(" ") : ""));
  return showCurrent();
}

async function undo() {
  const last = state.undo.pop();
  if (!last) { say("Nothing to undo.", true); markDone(); return; }
  const { status, data } = await call("POST", "/api/undo", { actions: last.actions });
  if (status !== 200) { say(data ? data.error : "The undo failed.", true); await loadQueue(); markDone(); return; }
  const now = new Map(data.items.map((item) => [item.id, item]));
  for (const entry of last.removed.slice().sort((a, b) => a.index - b.index)) {
    state.items.splice(Math.min(entry.index, state.items.length), 0, now.get(entry.item.id) || entry.item);
  }
  for (const [id, item] of now) {
    const index = state.items.findIndex((queued) => queued.id === id);
    if (index >= 0) state.items[index] = item;
  }
  if (last.removed.length) state.index = last.removed.map((entry) => entry.index).sort((a, b) => a - b)[0];
  say(`Undone: ${last.action}.`);
  await showCurrent();
  markDone();
}

function move(step) {
  if (!state.items.length) return;
  state.index = Math.max(0, Math.min(state.items.length - 1, state.index + step));
  return showCurrent();
}

function startEdit() {
  if (!state.items[state.index]) { state.mode = "normal"; return; }
  state.mode = "edit";
  for (const id of ["title", "authors"]) $(id).readOnly = false;
  $("title").focus();
  $("title").select();
}

function endEdit() {
  state.mode = "normal";
  for (const id of ["title", "authors"]) { $(id).readOnly = true; $(id).blur(); }
}

async function saveEdit() {
  const title = $("title").value.trim();
  const authors = $("authors").value.split(";").map((name) => name.trim()).filter((name) => name);
  endEdit();
  await decide("edit", { title, authors });
}

function cancelEdit() {
  endEdit();
  if (state.detail) renderItem(state.detail);
  say("Edit cancelled.");
}

function bulkQuery() {
  return { kind: $("bulk-kind").value, confidenceBelow: $("bulk-confidence").value.trim(),
           scoreBelow: $("bulk-score").value.trim(), photo: $("bulk-photo").value };
}

function openBulk() {
  state.mode = "bulk";
  $("bulk").hidden = false;
  updateBulkCount();
  $("bulk-kind").focus();
}

// The count shown is the selection the decision will post (ids with their versions now).
let bulkTimer = null;
state.bulk = null;
function updateBulkCount() {
  state.bulk = null;
  $("bulk-count").textContent = "Counting…";
  clearTimeout(bulkTimer);
  bulkTimer = setTimeout(async () => {
    const query = bulkQuery();
    try {
      const selection = await select(query);
      if (JSON.stringify(query) !== JSON.stringify(bulkQuery())) return; // changed meanwhile
      state.bulk = selection;
      const count = selection.count;
      $("bulk-count").textContent = `${count} item${count === 1 ? "" : "s"} match: Enter to ${$("bulk-action").value} them all.`;
    } catch (error) {
      $("bulk-count").textContent = shown(String(error.message || error));
    }
  }, 120);
}

function closePanel() {
  state.mode = "normal";
  $("bulk").hidden = true;
  $("search").hidden = true;
  document.activeElement && document.activeElement.blur();
}

async function applyBulk() {
  const selection = state.bulk;
  const action = $("bulk-action").value;
  closePanel();
  if (!selection) { say("The count was not ready: open the bulk panel again.", true); markDone(); return; }
  if (!selection.items.length) { say("No item matches the filter.", true); markDone(); return; }
  await decide(action, {}, selection.items);
}

function openSearch() {
  if (!state.canSearch) {
    state.mode = "normal";
    say("No local catalogue is configured: `bookpipe catalog import` makes one.", true);
    return;
  }
  state.mode = "search";
  $("search").hidden = false;
  $("search-text").value = "";
  $("search-hits").replaceChildren();
  $("search-text").focus();
}

let searchTimer = null;
function searchSoon() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(async () => {
    const { status, data } = await call("GET", "/api/search?q=" + encodeURIComponent($("search-text").value));
    if (status !== 200) { say(data ? data.error : "The search failed.", true); return; }
    state.hits = data;
    state.hit = 0;
    renderHits();
  }, 150);
}

function renderHits() {
  $("search-hits").replaceChildren(...state.hits.map((hit, index) => {
    const li = el("li", `${hit.title} — ${hit.authors.join(", ")}${hit.year ? " (" + hit.year + ")" : ""}`, "data");
    if (index === state.hit) li.classList.add("current");
    return li;
  }));
}

async function pickHit() {
  const hit = state.hits[state.hit];
  closePanel();
  if (!hit) return;
  await decide("edit", { title: hit.title, authors: hit.authors });
}

// Keys act in the order typed: a decision typed while the previous one is still being saved waits
// for it, so a fast "v v" verifies this item and then the next, never this one twice.
let chain = Promise.resolve();
function inOrder(action) {
  chain = chain.then(action).catch((error) => say(String(error), true));
}

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (state.mode === "edit") {
    if (event.key === "Enter") { event.preventDefault(); state.mode = "normal"; inOrder(saveEdit); }
    else if (event.key === "Escape") { event.preventDefault(); cancelEdit(); }
    return;
  }
  if (state.mode === "bulk") {
    if (event.key === "Enter") { event.preventDefault(); state.mode = "normal"; inOrder(applyBulk); }
    else if (event.key === "Escape") { event.preventDefault(); closePanel(); }
    return;
  }
  if (state.mode === "search") {
    if (event.key === "Enter") { event.preventDefault(); state.mode = "normal"; inOrder(pickHit); }
    else if (event.key === "Escape") { event.preventDefault(); closePanel(); }
    else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      state.hit = Math.max(0, Math.min(state.hits.length - 1, state.hit + (event.key === "ArrowDown" ? 1 : -1)));
      renderHits();
    }
    return;
  }
  const key = event.key;
  if (key === "v") inOrder(() => decide("verify"));
  else if (key === "e") { event.preventDefault(); state.mode = "edit"; inOrder(startEdit); }
  else if (key >= "1" && key <= "5") inOrder(() => decide("choose", { candidate: Number(key) }));
  else if (key === "n") inOrder(() => decide("none"));
  else if (key === "s") inOrder(() => { say("Skipped."); return move(1); });
  else if (key === "u") inOrder(undo);
  else if (key === "j" || key === "ArrowDown") { event.preventDefault(); inOrder(() => move(1)); }
  else if (key === "k" || key === "ArrowUp") { event.preventDefault(); inOrder(() => move(-1)); }
  else if (key === "b") { event.preventDefault(); state.mode = "bulk"; inOrder(openBulk); }
  else if (key === "r") turnCrop();
  else if (key === "/") { event.preventDefault(); state.mode = "search"; inOrder(openSearch); }
  else return;
});

document.addEventListener("DOMContentLoaded", () => {
  for (const id of ["bulk-kind", "bulk-confidence", "bulk-score", "bulk-photo", "bulk-action"]) {
    $(id).addEventListener("input", updateBulkCount);
    $(id).addEventListener("change", updateBulkCount);
  }
  $("search-text").addEventListener("input", searchSoon);
  $("fields").addEventListener("submit", (event) => event.preventDefault());
  $("bulk-form").addEventListener("submit", (event) => event.preventDefault());
  $("title").addEventListener("click", () => { if (state.mode === "normal") startEdit(); });
  loadQueue();
});
