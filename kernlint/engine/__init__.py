"""The symbolic bounds engine: kernel values as z3 terms, one solver query per memory access.

``evaluate`` walks a kernel (helpers inlined per call site) and records every access with its
symbolic address, mask and path condition; ``query`` asks z3 whether some program, lane and loop
iteration, at sizes the launch facts allow, reaches outside the tensor behind the pointer.
"""
