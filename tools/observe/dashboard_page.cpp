#include "tools/observe/dashboard_page.h"

namespace drk::observe {

// The plain page: the run's JSON and metrics, linked. The charts replace it (docs/dashboard.md).
std::string_view dashboard_page_html() {
  return R"html(<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>drkernel run</title></head>
<body>
<h1>drkernel run</h1>
<p id="training">waiting for the first snapshot...</p>
<ul>
<li><a href="/api/snapshot">/api/snapshot</a>: the run's state as JSON</li>
<li><a href="/api/events">/api/events</a>: the same, pushed as server-sent events when it changes</li>
<li><a href="/metrics">/metrics</a>: Prometheus metrics</li>
</ul>
<script>
new EventSource("/api/events").addEventListener("snapshot", (event) => {
  const run = JSON.parse(event.data).run;
  document.getElementById("training").textContent =
      run.topology + " in " + run.run_dir + ": " + (run.training || "no step yet") + (run.finished ? " (finished)" : "");
});
</script>
</body>
</html>
)html";
}

}  // namespace drk::observe
