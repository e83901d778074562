import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /status`: an HTML page with the store's state and, during a migration, the step,
/// stage and a progress bar — the Core Data book's migration view — that keeps itself up
/// to date by polling `/health` once a second. Rendered on the server first, so it says
/// something without JavaScript too.
struct StatusPage: Sendable {
    let health: HealthRoutes

    /// The route, relative to the root.
    var endpoints: RouteCollection<BookStoreRequestContext> {
        RouteCollection(context: BookStoreRequestContext.self)
            .get("status") { _, _ in
                let nonce = Self.makeNonce()
                let page = ByteBuffer(string: try render(await health.health(), nonce: nonce))
                var response = Response(status: .ok, headers: [.contentType: ContentType.html], body: .init(byteBuffer: page))
                response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy(nonce: nonce)
                return response
            }
    }

    /// The page runs its own script and style only (each carries the response's nonce),
    /// talks to this server only, and may not be framed: an injected script, were one to
    /// get through the escaping of the health data, would not run.
    static func contentSecurityPolicy(nonce: String) -> String {
        "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// 128 random bits, new for every response.
    static func makeNonce() -> String { RandomHex.bits128() }

    func render(_ health: Health, nonce: String) throws -> String {
        let initial = String(decoding: try Response.jsonEncoder().encode(health), as: UTF8.self)
            // Inside a <script>, "</" could end it early.
            .replacingOccurrences(of: "</", with: "<\\/")
        // The nonce first: the health data is the store's, and could spell the placeholder.
        return Self.template.replacingOccurrences(of: "__NONCE__", with: nonce).replacingOccurrences(of: "__INITIAL_HEALTH__", with: initial)
    }

    static let template = #"""
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>BookStore — status</title>
        <style nonce="__NONCE__">
          body { font: 15px/1.4 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; background: #f2f2f7; color: #1c1c1e; margin: 0; }
          main { max-width: 34em; margin: 4em auto; background: #fff; border-radius: 12px; padding: 1.5em 2em; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
          h1 { font-size: 1.3em; margin: 0 0 .2em; }
          #state { font-size: 1.1em; margin: .6em 0; }
          .bar { height: 10px; background: #e5e5ea; border-radius: 5px; overflow: hidden; margin: .8em 0; }
          .bar > div { height: 100%; width: 0; background: #007aff; transition: width .4s ease; }
          .ok .bar > div { background: #34c759; }
          dl { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; margin: .8em 0 0; }
          dt { color: #6e6e73; }
          dd { margin: 0; }
          footer { color: #6e6e73; font-size: .85em; margin-top: 1.2em; }
        </style>
        </head>
        <body>
        <main id="page">
          <h1>BookStore</h1>
          <div id="state">…</div>
          <div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="100"><div id="fill"></div></div>
          <dl id="details"></dl>
          <footer>Updates every second from <a href="/health">/health</a> · <a href="/openapi.json">OpenAPI</a> · <a href="/publications">/publications</a></footer>
        </main>
        <script nonce="__NONCE__">
        const initial = __INITIAL_HEALTH__;
        function show(health) {
          const page = document.getElementById("page");
          const state = document.getElementById("state");
          const fill = document.getElementById("fill");
          const details = document.getElementById("details");
          const rows = [["Model", health.model], ["Store", health.store]];
          let percent = 0;
          page.className = health.status === "ok" ? "ok" : "";
          if (health.status === "ok") {
            state.textContent = "Ready: the store is at " + health.model + ".";
            percent = 100;
          } else if (health.status === "migrating") {
            state.textContent = "Migrating… step " + health.step + " of " + health.stepCount + ": " + health.sourceVersion + " → " + health.destinationVersion;
            percent = health.percent;
            rows.push(["Stage", health.stage]);
            if (health.entityMapping) rows.push(["Entity mapping", health.entityMapping]);
            if (health.entity) rows.push(["Entity", health.entity]);
            if (health.instancesTotal) rows.push(["Rows", health.instancesDone + " of " + health.instancesTotal]);
            rows.push(["Done", percent + "%"]);
            rows.push(["Elapsed", duration(health.elapsedSeconds)]);
            rows.push(["Time left", health.estimatedSecondsRemaining === null ? "estimating…" : "about " + duration(health.estimatedSecondsRemaining)]);
          } else if (health.status === "waiting") {
            state.textContent = "Waiting: the store is at " + health.storeVersion + " and needs `bookstore migrate`.";
          } else if (health.status === "outdated") {
            state.textContent = "Outdated: " + health.reason;
          } else if (health.status === "unreachable") {
            state.textContent = "The service does not answer.";
          } else {
            state.textContent = health.status === "starting" ? "Starting…" : "Shutting down.";
          }
          fill.style.width = percent + "%";
          fill.parentElement.setAttribute("aria-valuenow", String(percent));
          details.replaceChildren(...rows.filter(r => r[1] !== undefined).flatMap(([name, value]) => {
            const dt = document.createElement("dt"); dt.textContent = name;
            const dd = document.createElement("dd"); dd.textContent = String(value);
            return [dt, dd];
          }));
        }
        function duration(seconds) {
          const h = Math.floor(seconds / 3600), m = Math.floor(seconds / 60) % 60, s = seconds % 60;
          return (h ? h + " h " : "") + (h || m ? m + " min " : "") + s + " s";
        }
        async function poll() {
          try {
            const response = await fetch("/health", { cache: "no-store" });
            show(await response.json());
          } catch (error) {
            show({ status: "unreachable", model: initial.model, store: initial.store });
          }
          setTimeout(poll, 1000);
        }
        show(initial);
        setTimeout(poll, 1000);
        </script>
        </body>
        </html>
        """#
}
