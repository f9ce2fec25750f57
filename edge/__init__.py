"""The table box service: capture, analysis, and alerts over MQTT (not built yet)."""
