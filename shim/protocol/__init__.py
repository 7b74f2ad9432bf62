"""Sans-IO wire layer: framing and (de)serialisation of requests and responses with kio."""
