# Batch norm in training and in evaluation mode
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(4, 3) * 2 + 1
bn = nn.BatchNorm1d(3)

bn.train()  # normalises with this batch's mean and variance, updates the running statistics
out_train = bn(x)
print("train output:", out_train)
print("running_mean:", bn.running_mean)
print("running_var:", bn.running_var)

bn.eval()  # normalises with the running statistics instead
out_eval = bn(x)
print("eval output:", out_eval)

loss = (out_train ** 2).sum() + out_eval.sum()
loss.backward()
print("weight.grad:", bn.weight.grad)
print("bias.grad:", bn.bias.grad)
