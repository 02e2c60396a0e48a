"""blk.triton.tools: what Triton's triton.tools offers that kernels' host code
imports. tensor_descriptor.TensorDescriptor (a host-made TMA descriptor
given to a kernel as an argument) is not translated yet: a kernel launched
with one raises TranslationError; make the descriptor in the kernel
(tl.make_tensor_descriptor) instead."""

import types


class TensorDescriptor:
    """Triton's host-side tensor descriptor (base, shape, strides,
    block_shape); accepted here so that modules importing it load."""

    def __init__(self, base, shape, strides, block_shape, padding="zero"):
        self.base, self.shape, self.strides, self.block_shape = base, list(shape), list(strides), list(block_shape)
        self.padding = padding

    @staticmethod
    def from_tensor(tensor, block_shape, padding="zero"):
        return TensorDescriptor(tensor, tensor.shape, tensor.stride(), block_shape, padding)


tensor_descriptor = types.ModuleType("blk.triton.tools.tensor_descriptor")
tensor_descriptor.TensorDescriptor = TensorDescriptor
