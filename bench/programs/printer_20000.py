# A program that prints 20,000 lines (about 900 KB).
total = 0
for i in range(20000):
    total += i * i
    print(f"line {i:5d}: running sum of squares = {total}")
print("done")
