"""Coordinators: plain synchronous objects that take ``now_ms`` and report their next deadline."""
