# Stub of the optional C extension (_csensor.c): Sensor's window fields and record().

WINDOW: float

class SensorFields:
    _base_n: int
    _base_sum: float
    _max: float
    _n: int
    _p_max: float
    _p_n: int
    _p_start: float
    _p_sum: float
    _start: float
    _sum: float
    def record(self, value: float = 1.0, now: float | None = None) -> None: ...
