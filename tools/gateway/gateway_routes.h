// The gateway's HTTP API (docs/gateway.md): KernelGYM's endpoints (POST /evaluate,
// POST /evaluate/batch, GET /status/{id}, GET /results/{id}, DELETE /tasks/{id}, GET /health,
// GET /queue/status, GET /workers/status, GET /metrics) and ours, GET /results/stream (every
// result as it finishes, as server-sent events), each answered by the Gateway.
//
// Thread-safety: the router's handlers call the gateway, which is thread-safe. Ownership: the
// router refers to `gateway`, which must outlive the server that dispatches to it.
#pragma once

#include "runtime/http/router.h"
#include "tools/gateway/gateway.h"

namespace drk::gateway {

runtime::http::Router gateway_router(Gateway& gateway);

}  // namespace drk::gateway
