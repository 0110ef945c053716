"""What every live model shares: one streamed request per call, through its provider's official
SDK, read through a :class:`~.line_tap.LineTap` so each chunk keeps the text it came in.

``OllamaModel`` and the server-sent-event models (``sse_model.py``) are subclasses. Each is a
``chat`` for the loop, and also what the recorder and the lessons drive around a run:

- ``preflight()``: before a run, ask the server whether it can serve it (it is there, the
  key is taken, the model is there and can do the task); raise the model's error saying
  what to do, else return None;
- ``chunks_with_lines(messages, tool_schemas)``: the reply as ``(chunk, text)`` pairs, the
  text exactly as it came (an NDJSON line, a server-sent event), for a recording;
- ``provenance()``: who will have written the chunks, as the server tells;
- ``about(provenance)``: that, in one line for a person; ``address``: where the server is;
- ``finish_provenance(recording)``: what only the run's replies tell, added afterwards.
"""

from __future__ import annotations


class SDKModel:
    """A live model: a subclass names its ``provider``, makes ``client`` (its SDK's, over a
    ``LineTap``), sends the request (``_request``), pairs each parsed chunk with the text it
    came in (``_pairs``), names its SDK's errors (``errors``) and turns one into its own
    error saying what to do (``failure``)."""

    provider = ""  # its row of ``providers.PROVIDERS``: also the name of its wire format
    errors: tuple = ()

    @property
    def wire_format(self) -> str:
        return self.provider

    def __call__(self, messages: list, tool_schemas: list):
        """Send one request; return an iterator of chunks (dicts). Closing it ends the request."""
        return chunks_only(self.chunks_with_lines(messages, tool_schemas))

    def chunks_with_lines(self, messages: list, tool_schemas: list):
        """Like calling it, but each item is ``(chunk, text)``: the line or server-sent event
        exactly as it came."""
        received = 0
        stream = None
        try:
            stream = self._request(messages, tool_schemas)
            for pair in self._pairs(stream):
                received += 1
                yield pair
        except self.errors as exc:
            raise self.failure(exc, received) from exc
        finally:
            if stream is not None:
                stream.close()  # ends the HTTP response, also when the loop abandons it

    def finish_provenance(self, recording: dict) -> None:
        """Add to a finished recording's provenance what only the replies told (nothing here)."""

    def close(self) -> None:
        """Close the HTTP connections (the object cannot be used afterwards)."""
        self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def chunks_only(pairs):
    """The chunks of ``(chunk, text)`` pairs; closing it closes ``pairs`` (ends the request)."""
    try:
        for chunk, _ in pairs:
            yield chunk
    finally:
        pairs.close()
