-- wrk script for bench/webhook_bench.py: signed `issues` deliveries, each with its own X-GitHub-Delivery id.
-- args: <requests file: "signature<TAB>body" per line> <delivery id prefix> <deliveries per thread>
-- A thread stops after its share and prints STOPPED; the caller then ends wrk with SIGINT.
local threads = {}

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  bodies = {}
  for line in io.lines(args[1]) do
    local signature, body = line:match("^([^\t]*)\t(.*)$")
    bodies[#bodies + 1] = {signature, body}
  end
  prefix, quota = args[2], tonumber(args[3])
  sent, answered, accepted = 0, 0, 0
end

function request()
  sent = sent + 1
  local signed = bodies[(sent - 1) % #bodies + 1]
  return wrk.format("POST", "/webhook", {
    ["Content-Type"] = "application/json",
    ["X-GitHub-Event"] = "issues",
    ["X-GitHub-Delivery"] = string.format("%s-%d-%d", prefix, tid, sent),
    ["X-Hub-Signature-256"] = "sha256=" .. signed[1],
  }, signed[2])
end

function response(status, headers, body)
  answered = answered + 1
  if status == 202 then accepted = accepted + 1 end
  if answered == quota then
    io.write("STOPPED\n")
    io.flush()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local accepted_total = 0
  for _, thread in ipairs(threads) do accepted_total = accepted_total + thread:get("accepted") end
  io.write(string.format(
    'WRK {"requests": %d, "accepted": %d, "seconds": %.6f, "p50_us": %d, "p90_us": %d, "p99_us": %d, ' ..
    '"max_us": %d, "socket_errors": %d}\n',
    summary.requests, accepted_total, summary.duration / 1e6, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
