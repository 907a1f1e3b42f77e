"""A small tool-using agent instrumented by a real GenAI instrumentation package, run as
its own process (an instrumentor patches the OpenAI SDK for the whole process, so each
shape gets a fresh one).

    python genai_agent.py SHAPE MODEL_URL SERVER_URL API_KEY AGENT RUNS

The agent runs `RUNS` conversations against the OpenAI-compatible server at MODEL_URL
(the loopback stub): the system prompt and the person's ask, a `get_order` call its own
code answers, and the model's reply. Each run is one trace, a root `invoke_agent` span
naming the agent, with the instrumentation's spans (and log events) exported over
OTLP/HTTP protobuf to SERVER_URL's /v1/traces and /v1/logs. The trace ids are printed,
one a line.
"""

from __future__ import annotations

import json
import os
import sys

SYSTEM = "You are the orders agent. Look orders up before you answer."
ASK = "where is my order ORD-1042?"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look an order up by its id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    }
]
SHAPES = (
    "openai-v2-spans",
    "openai-v2-events",
    "openllmetry",
    "openllmetry-events",
    "openllmetry-flat",
    "openinference",
)


def get_order(order_id: str) -> dict[str, str]:
    return {"order_id": order_id, "status": "shipped"}


def main() -> None:
    shape, model_url, server_url, key, agent, runs = sys.argv[1:7]
    if shape not in SHAPES:
        raise SystemExit(f"shape {shape!r}: expected one of {', '.join(SHAPES)}")
    if shape.startswith("openai-v2"):
        # The official instrumentation's current conventions, content on the span or in a
        # `gen_ai.client.inference.operation.details` log event.
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        content = "SPAN_ONLY" if shape.endswith("spans") else "EVENT_ONLY"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = content

    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    headers = {"X-Api-Key": key}
    resource = Resource.create({"service.name": f"{agent}-service"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(f"{server_url}/v1/traces", headers=headers))
    )
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(f"{server_url}/v1/logs", headers=headers))
    )
    providers = {"tracer_provider": tracer_provider, "logger_provider": logger_provider}
    if shape.startswith("openai-v2"):
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(**providers)
    elif shape == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor as OIInstrumentor

        OIInstrumentor().instrument(tracer_provider=tracer_provider)
    else:  # Traceloop's OpenLLMetry; the flattened shape is its 0.53 release (side overlay)
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor as LLInstrumentor

        options = {"use_legacy_attributes": False} if shape.endswith("events") else {}
        LLInstrumentor(**options).instrument(**providers)

    import openai

    client = openai.OpenAI(base_url=model_url, api_key="stub-key")
    tracer = tracer_provider.get_tracer("orders-agent")
    for _ in range(int(runs)):
        with tracer.start_as_current_span(f"invoke_agent {agent}") as root:
            root.set_attribute("gen_ai.operation.name", "invoke_agent")
            root.set_attribute("gen_ai.agent.name", agent)
            messages: list[dict] = [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": ASK},
            ]
            for _turn in range(4):
                reply = client.chat.completions.create(model="stub", messages=messages, tools=TOOLS)
                message = reply.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                for call in message.tool_calls:
                    result = get_order(**json.loads(call.function.arguments))
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
                    )
            print(format(root.get_span_context().trace_id, "032x"), flush=True)
    tracer_provider.shutdown()
    logger_provider.shutdown()


if __name__ == "__main__":
    main()
