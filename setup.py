"""The one C extension: kafka_codecs._walk, the record walk that validates every produced batch,
the batch-header walk of ListOffsets by timestamp, and (_produce.c, which _walk.c includes) the
reading of a Produce request and the checks of a produced batch's header.

Optional: where it cannot be built (no C compiler), the install goes on and kafka_codecs uses the
same walk in Python, which is correct but about two hundred times slower per record."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("kafka_codecs._walk", ["codecs/kafka_codecs/_walk.c"],
                             depends=["codecs/kafka_codecs/_produce.c"], optional=True)])
