# A program as people bring it (issue 21, twelfth session): chatbot_packed_encoder — prints PyTorch's stdout in the sandbox.
# ruff: noqa: UP008, UP010, UP029 - the tutorial's own idioms (super(Class, self), __future__, io.open), as written
import itertools
import random
import torch
import torch.nn as nn
import torch.nn.functional as F
random.seed(0); torch.manual_seed(0)
PAD_token, SOS_token, EOS_token = 0, 1, 2
def zeroPadding(l, fillvalue=PAD_token):
    return list(itertools.zip_longest(*l, fillvalue=fillvalue))
def binaryMatrix(l, value=PAD_token):
    m = []
    for i, seq in enumerate(l):
        m.append([])
        for token in seq:
            m[i].append(0 if token == PAD_token else 1)
    return m
batch = [[5, 6, 7, EOS_token], [8, 9, EOS_token], [4, EOS_token]]
lengths = torch.tensor([len(indexes) for indexes in batch])
padList = zeroPadding(batch)
padVar = torch.LongTensor(padList)
mask = torch.BoolTensor(binaryMatrix(padList))
print(padVar, lengths, mask.shape)
class EncoderRNN(nn.Module):
    def __init__(self, hidden_size, embedding, n_layers=1, dropout=0):
        super(EncoderRNN, self).__init__()
        self.n_layers = n_layers
        self.hidden_size = hidden_size
        self.embedding = embedding
        self.gru = nn.GRU(hidden_size, hidden_size, n_layers, dropout=(0 if n_layers == 1 else dropout), bidirectional=True)
    def forward(self, input_seq, input_lengths, hidden=None):
        embedded = self.embedding(input_seq)
        packed = nn.utils.rnn.pack_padded_sequence(embedded, input_lengths)
        outputs, hidden = self.gru(packed, hidden)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs)
        outputs = outputs[:, :, :self.hidden_size] + outputs[:, : ,self.hidden_size:]
        return outputs, hidden
embedding = nn.Embedding(10, 4)
enc = EncoderRNN(4, embedding, n_layers=2, dropout=0.1)
enc.eval()
out, hid = enc(padVar, lengths)
print(out.shape, hid.shape)
def maskNLLLoss(inp, target, mask):
    nTotal = mask.sum()
    crossEntropy = -torch.log(torch.gather(inp, 1, target.view(-1, 1)).squeeze(1))
    loss = crossEntropy.masked_select(mask).mean()
    return loss, nTotal.item()
probs = F.softmax(torch.randn(3, 10), dim=1)
loss, n = maskNLLLoss(probs, padVar[0], mask[0])
print(round(loss.item(), 4), n)
topv, topi = probs.topk(1)
print(topi.squeeze(1).tolist(), torch.LongTensor([[topi[i][0] for i in range(3)]]))
print(random.choice(["a", "b", "c"]), random.random() < 0.5)
