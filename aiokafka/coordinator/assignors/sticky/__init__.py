"""aiokafka 0.x import path of the sticky assignor (compatibility shim)."""
