-- wrk script for scripts/load.sh: a mix of the service's reads and writes over a store of
-- BOOKS publications, and a summary line of throughput, latency and answers by status.
--
--   60 %  GET   /publications/{id}
--   20 %  GET   /publications?limit=20&offset=K
--    5 %  GET   /publications/{id}/pages
--    8 %  PATCH /publications/{id}           (a new price)
--    4 %  POST  /publications                (a new publication)
--    3 %  POST  /publications/{id}/pages     (a new page)
local books = tonumber(os.getenv("BOOKS") or "1000")
-- Writes carry the service's write key (scripts/lib/server.sh makes one per run).
local json = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. (os.getenv("WRITE_KEY") or "") }
local threads = {}

function setup(thread)
    table.insert(threads, thread)
    thread:set("number", #threads)
end

function init(args)
    -- A seed of each thread's own: threads seeded alike send the same requests at the same
    -- moments, and their writes to one row then conflict far more than clients' would.
    math.randomseed(os.time() * 100 + number)
    statuses = {}
end

function request()
    local roll = math.random(100)
    local id = math.random(books)
    if roll <= 60 then
        return wrk.format("GET", "/publications/" .. id)
    elseif roll <= 80 then
        return wrk.format("GET", "/publications?limit=20&offset=" .. math.random(0, math.max(books - 20, 0)))
    elseif roll <= 85 then
        return wrk.format("GET", "/publications/" .. id .. "/pages")
    elseif roll <= 93 then
        return wrk.format("PATCH", "/publications/" .. id, json, '{"price": ' .. math.random(1, 999) .. '}')
    elseif roll <= 97 then
        return wrk.format("POST", "/publications", json, '{"title": "Load ' .. math.random(1000000000) .. '", "price": 9.5}')
    else
        return wrk.format("POST", "/publications/" .. id .. "/pages", json, '{"text": "Written under load."}')
    end
end

function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
    local counts = {}
    for _, thread in ipairs(threads) do
        for status, count in pairs(thread:get("statuses")) do
            counts[status] = (counts[status] or 0) + count
        end
    end
    local keys = {}
    for status in pairs(counts) do table.insert(keys, status) end
    table.sort(keys)
    local byStatus, serverErrors = {}, 0
    for _, status in ipairs(keys) do
        table.insert(byStatus, status .. "=" .. counts[status])
        if status >= 500 then serverErrors = serverErrors + counts[status] end
    end
    local e = summary.errors
    local socketErrors = e.connect + e.read + e.write + e.timeout
    io.write(string.format("LOAD requests=%d seconds=%.1f rps=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f socket_errors=%d server_errors=%d statuses=%s\n",
        summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
        socketErrors, serverErrors, table.concat(byStatus, ",")))
end
