"""Text: fails with a message full of terminal escape sequences (clear the screen, set the window
title, a hyperlink) and bidi controls that show text in another order than it is."""
KERNEL_TYPE = "softmax"


def kernel_fn(x):
    raise RuntimeError("\x1b[2J\x1b[H\x1b]0;owned\x07\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\ "
                       "\u202eexe.txt\u202c \u2066hidden\u2069 \x9b31m done\r")
