"""The table box service (`paigow run`): camera, analysis, an outbox that loses nothing, and
alerts and round records over MQTT to the surveillance room."""
