import MissiveRendering

/// The web page's own script and stylesheet, served as `/static/missive.js` and `/static/missive.css`. They are
/// kept here, in the library, so that the server is one binary with nothing to install beside it.
enum WebPageAssets {
    /// The stylesheet of the renderer's components without inline styles (the standard one, with the widths of
    /// progress bars as classes, since the page's policy allows no inline style), and the page's own rules.
    static let stylesheet: String = {
        var css = HTMLComponents.withoutInlineStyles.stylesheet + "\n"
        css += """
            body { min-height: 100vh; display: flex; flex-direction: column; }
            .page-header { display: flex; align-items: center; gap: 12px; padding: 10px 16px; border-bottom: 1px solid var(--rule); background: var(--bubble); }
            .page-header .home { font-weight: 700; color: var(--fg); text-decoration: none; }
            .page-header .who { margin-left: auto; color: var(--muted); }
            .page-header form { margin: 0; }
            .page { width: 100%; max-width: 760px; margin: 0 auto; padding: 16px; box-sizing: border-box; flex: 1 0 auto; display: flex; flex-direction: column; }
            .page > h1 { margin: 0 0 8px; font-size: 20px; line-height: 28px; }
            .page .transcript { max-width: none; width: 100%; padding: 0 0 16px; margin: 0; flex: 1 0 auto; }
            .conversations { list-style: none; padding: 0; margin: 0; }
            .conversations li { display: flex; gap: 12px; align-items: center; padding: 10px 12px; border: 1px solid var(--bubble-border); border-radius: 10px; margin: 0 0 8px; background: var(--bubble); }
            .conversations a { color: var(--link); font-weight: 600; text-decoration: none; }
            .conversations .unread { margin-left: auto; font-size: 12px; padding: 2px 8px; border-radius: 999px; background: var(--badge-info); color: var(--badge-info-fg); }
            .conversations .empty { color: var(--muted); }
            button { font: inherit; padding: 6px 14px; border-radius: 8px; border: 1px solid var(--button-border); background: var(--button); color: var(--fg); cursor: pointer; }
            button:disabled { cursor: default; opacity: 0.6; }
            textarea, input { font: inherit; color: var(--fg); background: var(--bubble); border: 1px solid var(--bubble-border); border-radius: 8px; padding: 6px 8px; box-sizing: border-box; }
            .composer { position: sticky; bottom: 0; display: flex; gap: 8px; align-items: flex-end; padding: 10px 0; background: var(--bg); border-top: 1px solid var(--rule); }
            .composer textarea { flex: 1 1 auto; resize: vertical; }
            .compose-actions { display: flex; flex-wrap: wrap; gap: 8px; padding: 4px 0 16px; }
            .compose-action { border: 1px solid var(--bubble-border); border-radius: 10px; padding: 6px 10px; background: var(--bubble); }
            .compose-action summary { cursor: pointer; font-weight: 600; }
            .compose-form { display: flex; flex-direction: column; gap: 8px; margin-top: 8px; min-width: 280px; }
            .compose-form label, .sign-in label { display: flex; flex-direction: column; gap: 4px; font-size: 13px; color: var(--muted); }
            .sign-in { display: flex; flex-direction: column; gap: 12px; max-width: 420px; }
            .status { min-height: 1.2em; margin: 4px 0; font-size: 13px; color: var(--muted); }
            .status.failed, .error { color: var(--badge-danger-fg); }
            .hint { color: var(--muted); font-size: 13px; }
            """
        return css
    }()

    /// The page's script. It never writes message content into markup: a message that arrives or changes is
    /// fetched from the server already drawn and sanitized (`GET /c/{conversation}/m/{message}`) and parsed in an
    /// inert `<template>`; everything else it shows goes through `textContent`.
    static let script = #"""
        "use strict";
        (function () {
          const body = document.body;
          if (!body || body.dataset.page !== "conversation") return;
          const conversation = body.dataset.conversation;
              const base = "/api/v1/conversations/" + encodeURIComponent(conversation);
          const list = document.getElementById("messages");
          const status = document.getElementById("status");
          let position = null;
          let lastRead = null;
          let retry = 500;

          function say(text, failed) {
            status.textContent = text;
            status.classList.toggle("failed", !!failed);
          }

          async function post(url, value) {
            const response = await fetch(url, {
              method: "POST", credentials: "same-origin",
              headers: { "Content-Type": "application/json" }, body: JSON.stringify(value)
            });
            let answer = null;
            try { answer = await response.json(); } catch (e) { answer = null; }
            if (!response.ok) {
              const reason = answer && answer.error ? answer.error.message : ("HTTP " + response.status);
              throw new Error(reason);
            }
            return answer;
          }

          function articles() { return Array.from(list.querySelectorAll("article.msg[data-id]")); }
          function find(id) { return articles().find(function (a) { return a.dataset.id === id; }) || null; }

          function arm(root) {
            root.querySelectorAll("button.el-button[data-action]").forEach(function (button) { button.disabled = false; });
          }

          // A message drawn by the server, parsed in an inert template and put in place of its old version.
          async function refresh(id) {
            const response = await fetch("/c/" + encodeURIComponent(conversation) + "/m/" + encodeURIComponent(id), { credentials: "same-origin" });
            if (response.status === 404) { remove(id); return; }
            if (!response.ok) throw new Error("HTTP " + response.status);
            const template = document.createElement("template");
            template.innerHTML = await response.text();
            const article = template.content.querySelector("article.msg");
            if (!article) return;
            arm(article);
            const old = find(id);
            if (old) {
              old.replaceWith(article);
            } else {
              const empty = list.querySelector(".transcript-empty");
              if (empty) empty.remove();
              list.appendChild(article);
              article.scrollIntoView({ block: "end" });
            }
            markRead();
          }

          function remove(id) {
            const old = find(id);
            if (old) old.remove();
          }

          async function markRead() {
            if (document.visibilityState !== "visible") return;
            const all = articles();
            if (all.length === 0) return;
            const last = all[all.length - 1].dataset.id;
            if (last === lastRead) return;
            lastRead = last;
            try { await post(base + "/read", { upTo: last }); } catch (e) { lastRead = null; }
          }

          function connect() {
            const scheme = location.protocol === "https:" ? "wss:" : "ws:";
            const query = position === null ? "" : "?after=" + encodeURIComponent(position);
            const socket = new WebSocket(scheme + "//" + location.host + "/api/v1/events" + query);
            socket.addEventListener("open", function () { retry = 500; });
            socket.addEventListener("message", function (event) {
              let frame;
              try { frame = JSON.parse(event.data); } catch (e) { return; }
              if (frame.type === "hello") {
                body.dataset.live = "yes";
                if (position === null) position = frame.position;
                return;
              }
              if (typeof frame.position === "number") position = frame.position;
              if (frame.conversation !== conversation) return;
              if ((frame.type === "message" || frame.type === "edit") && frame.message) {
                refresh(frame.message.id).catch(function (e) { say("Could not show a message: " + e.message, true); });
              } else if (frame.type === "delete") {
                remove(frame.id);
              }
            });
            socket.addEventListener("close", function () {
              body.dataset.live = "no";
              setTimeout(connect, retry);
              retry = Math.min(retry * 2, 15000);
            });
          }

          list.addEventListener("click", async function (event) {
            const button = event.target.closest("button.el-button[data-action]");
            if (!button) return;
            const article = button.closest("article.msg[data-id]");
            if (!article) return;
            let values = [];
            if (button.dataset.arguments) {
              try { values = JSON.parse(button.dataset.arguments); } catch (e) { values = []; }
              if (!Array.isArray(values)) values = [values];
            }
            button.disabled = true;
            try {
              const answer = await post(base + "/messages/" + encodeURIComponent(article.dataset.id) + "/actions/" + encodeURIComponent(button.dataset.action), { arguments: values });
              if (answer && answer.result === "url" && /^https?:\/\//i.test(answer.url)) window.open(answer.url, "_blank", "noopener,noreferrer");
              say("");
            } catch (e) {
              say(e.message, true);
            } finally {
              button.disabled = false;
            }
          });

          const composer = document.getElementById("composer");
          composer.addEventListener("submit", async function (event) {
            event.preventDefault();
            const field = composer.elements.namedItem("text");
            const text = field.value;
            if (text.trim() === "") return;
            try {
              await post(base + "/messages", { objectName: "MS:Text", content: { content: text } });
              field.value = "";
              say("");
            } catch (e) {
              say(e.message, true);
            }
          });
          composer.addEventListener("keydown", function (event) {
            if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); composer.requestSubmit(); }
          });

          document.querySelectorAll("form.compose-form[data-action]").forEach(function (form) {
            form.addEventListener("submit", async function (event) {
              event.preventDefault();
              const values = [];
              for (const control of Array.from(form.querySelectorAll("[data-type]"))) {
                const type = control.dataset.type;
                if (type === "string") values.push(control.value);
                else if (type === "bool") values.push(control.checked);
                else values.push(Number(control.value));
              }
              try {
                await post(base + "/compose/" + encodeURIComponent(form.dataset.action), { arguments: values });
                form.reset();
                const details = form.closest("details");
                if (details) details.open = false;
                say("");
              } catch (e) {
                say(e.message, true);
              }
            });
          });

          document.addEventListener("visibilitychange", markRead);
          arm(list);
          const all = articles();
          if (all.length > 0) all[all.length - 1].scrollIntoView({ block: "end" });
          markRead();
          connect();
          body.dataset.ready = "yes";
            })();
        """#
}
