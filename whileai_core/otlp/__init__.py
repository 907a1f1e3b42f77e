"""OTLP decoding: OpenTelemetry trace and log export requests in, trace rows out.

    decode       an export body (protobuf or JSON, gzip or not) -> spans, and spans ->
                 the trace row the store keeps
    json         OTLP JSON requests -> spans, checked field by field
    proto        OTLP protobuf requests -> spans, counted on the wire before parsing
    genai        the conversation a trace's model calls carried, whichever GenAI
                 instrumentation sent it

Every decoder counts a request against the store's request limits (`store.limits`)
before it allocates, and the store's trace table (`store.traces`) is its one caller
that keeps what it decodes.
"""
