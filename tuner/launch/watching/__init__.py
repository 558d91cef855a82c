"""What runs beside a sweep for the person watching it: the live table and the metric guard, TensorBoard logs, the live HTML report."""
